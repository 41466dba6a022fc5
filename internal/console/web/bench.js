// The bench: every device the token may see, live. Values follow
// hal/value and states hal/deviceState; a writable device gets a control
// made from its schema, and a device with a write waiting for an admin
// (whoever asked) says so, with the value asked for, the value now and
// the countdown. While the page is not live its values are greyed with
// their time and its controls are off; during a stop a device's only
// control is the write of its safe value.
import { html, useEffect, useState } from "./vendor/htm/standalone.module.js";
import { explain } from "./hub.js";
import { canWrite, isAdmin, secondsLeft, showValue, unitSymbol, when, where, who } from "./format.js";
import { useNow } from "./now.js";
import { Plots } from "./plots.js";

// heldValue is how old a value hal/read may answer from the cache: the
// bench wants the value held, not a new measurement.
const heldValue = 24 * 3600 * 1000;

// useDevices lists the devices and follows their values and states.
// values maps a device id to its last {value, ts}.
export function useDevices(conn) {
	const [devices, setDevices] = useState([]);
	const [values, setValues] = useState({});
	useEffect(() => {
		if (!conn) return;
		const s = conn.session;
		// Values are taken into the page at most once a frame: values that
		// stream in by the thousand a second must not keep the page (and
		// its STOP) busy rendering each one.
		let due = {}, frame = 0;
		const flush = () => {
			const batch = due;
			due = {}, frame = 0;
			setValues((v) => ({ ...v, ...batch }));
		};
		const setValue = (p) => {
			due[p.device] = { value: p.value, ts: p.ts };
			frame = frame || requestAnimationFrame(flush);
		};
		const patch = (id, f) => setDevices((ds) => ds.map((d) => (d.id === id ? { ...d, ...f } : d)));
		const offs = [
			s.on("hal/value", setValue),
			s.on("hal/deviceState", (p) => patch(p.device, { state: p.state, fault: p.fault })),
			s.on("hal/deviceAdded", (p) => setDevices((ds) => [...ds.filter((d) => d.id !== p.device.id), p.device])),
			s.on("hal/deviceRemoved", (p) => setDevices((ds) => ds.filter((d) => d.id !== p.device))),
		];
		s.call("hal/devices/list").then((res) => {
			setDevices(res.devices);
			for (const d of res.devices) {
				if (!String(d.access).includes("r")) continue;
				s.call("hal/read", { device: d.id, maxAgeMs: heldValue }).then(setValue, () => {});
			}
		}, () => {});
		return () => { offs.forEach((off) => off()); cancelAnimationFrame(frame); };
	}, [conn]);
	return { devices, values };
}

// Bench shows the devices; confirmations are the console's list (the
// Hub's listing, then its notifications), from which each device shows
// every pending request for it, whoever made it. live is false while the
// page reconnects (lostAt: since when); stopped is the stop in force.
export function Bench({ conn, devices, values, confirmations, onPending, live = true, lostAt, stopped }) {
	if (devices.length === 0) return html`<p class="muted">This token may see no device.</p>`;
	const waiting = (d) => confirmations.filter((c) => c.status === "pending" && c.device === d.id);
	return html`<div class="cards">
			${devices.map((d) => html`<${Device} key=${d.id} conn=${conn} d=${d} v=${values[d.id]} pending=${waiting(d)}
				onPending=${onPending} live=${live} stopped=${!!stopped} />`)}
		</div>
		<${Plots} conn=${conn} devices=${devices} live=${live} lostAt=${lostAt} />`;
}

function Device({ conn, d, v, pending, onPending, live, stopped }) {
	const [reply, setReply] = useState(null);
	const [error, setError] = useState("");
	const write = async (value) => {
		setError("");
		try {
			const res = await conn.session.call("hal/write", { device: d.id, value, replyWithinMs: 1000 });
			if (res.status === "pending") onPending(res.confirmation);
			else setReply(res.reply === undefined ? null : res.reply);
		} catch (err) {
			setError(explain(err));
		}
	};
	const may = String(d.access).includes("w") && canWrite(conn.init.principal);
	// A stop refuses every write but that of a safe value (spec §6).
	const writable = may && live && !stopped;
	const safe = may && stopped && d.safe !== undefined;
	return html`<article class=${"card" + (live ? "" : " stale")} data-test="device" data-device=${d.id}>
		<h3>${d.label || d.id} <code class="muted">${d.id}</code></h3>
		${where(d) && html`<p class="muted" data-test="where">${where(d)}</p>`}
		<p class="value" data-test="value">${showValue(v && v.value, d.schema)}</p>
		${!live && html`<p class="muted" data-test="value-time">${v && v.ts ? "last value at " + when(v.ts) + ", not live" : "no value received, not live"}</p>`}
		<p><span data-test="state" class=${"state-" + d.state}>${d.state === "fault" ? "fault: " + (d.fault || "") : d.state}</span>${" · "}<span class=${"risk-" + d.risk}>risk ${d.risk}</span>${" · " + d.source}</p>
		<${Control} d=${d} v=${v} writable=${writable} onWrite=${write} reply=${reply} />
		${safe && html`<p><button type="button" class="secondary" data-test="write-safe" disabled=${!live} onClick=${() => write(d.safe)}>Set to its safe value, ${showValue(d.safe, d.schema)}</button></p>`}
		${may && stopped && !safe && html`<p class="muted" data-test="stopped-control">Stopped: this device has no safe value to write.</p>`}
		${pending.map((c) => html`<${Pending} key=${c.id} c=${c} d=${d} v=${v} admin=${isAdmin(conn.init.principal)} />`)}
		${error && html`<p class="error" role="alert">${error}</p>`}
	</article>`;
}

// queue is the confirmations view, where an admin approves or rejects.
const queue = "#/confirmations";

// Pending is a request waiting for an admin: who asked for what, the
// value now, the time left; an admin gets the way to the queue.
function Pending({ c, d, v, admin }) {
	const now = useNow();
	const asked = showValue(c.value, d.schema);
	const cur = v ? v.value : c.current && c.current.value;
	return html`<p class="pending" data-test="pending" data-id=${c.id}>Waiting for approval (${who(c.requestedBy)} asked for ${asked}${cur !== undefined ? ", now " + showValue(cur, d.schema) : ""}) · ${c.id}, ${secondsLeft(c.expiresAt, now)} s left${admin ? html` · <a href=${queue} data-test="pending-review">approve or reject</a>` : ""}</p>`;
}

// Control is the input the schema calls for; read-only devices and
// tokens get it disabled.
function Control({ d, v, writable, onWrite, reply }) {
	const schema = d.schema || {};
	const id = "ctl-" + d.id;
	const cur = v ? v.value : undefined;
	switch (schema.type) {
	case "boolean":
		return html`<label for=${id}><input id=${id} type="checkbox" data-test="control" disabled=${!writable}
			checked=${cur === true} onChange=${(ev) => onWrite(ev.target.checked)} /> on</label>`;
	case "number":
	case "integer":
		if (schema.minimum === undefined || schema.maximum === undefined) {
			// No range to slide over (a Modbus register): a box, none when never written.
			return String(d.access).includes("w") ? html`<${NumberBox} id=${id} schema=${schema} step=${stepFor(d)} writable=${writable} onWrite=${onWrite} />` : null;
		}
		return html`<${Range} id=${id} schema=${schema} step=${stepFor(d)} cur=${cur} writable=${writable} onWrite=${onWrite} />`;
	case "string":
		if (Array.isArray(schema.enum)) return html`<${Choice} id=${id} options=${schema.enum} cur=${cur} writable=${writable} onWrite=${onWrite} />`;
		return html`<${Line} id=${id} writable=${writable} onWrite=${onWrite} reply=${reply} />`;
	}
	return null;
}

// stepFor is a number's step: 1 for an integer; one raw unit of an
// integer Modbus register, scaled (a speed in 0.01 Hz steps by 0.01),
// since a value between two cannot be written; else a hundredth of the
// range, rounded to a power of ten, or any without one.
function stepFor(d) {
	const schema = d.schema || {}, r = d.modbus;
	if (schema.type === "integer") return 1;
	if (r && /int/.test(r.type)) return Math.abs(r.scale || 1);
	if (schema.minimum === undefined || schema.maximum === undefined) return "any";
	return stepOf(schema.minimum, schema.maximum);
}

// Choice picks one of an enum's values (a Modbus status word's names),
// written when chosen.
function Choice({ id, options, cur, writable, onWrite }) {
	return html`<label for=${id}>set <select id=${id} data-test="control" disabled=${!writable}
		onChange=${(ev) => onWrite(ev.target.value)}>
		${!options.includes(cur) && html`<option value="" selected disabled>—</option>`}
		${options.map((o) => html`<option key=${o} value=${o} selected=${o === cur}>${o}</option>`)}
	</select></label>`;
}

// NumberBox is a number typed and written on Enter, within the bounds the
// schema has.
function NumberBox({ id, schema, step, writable, onWrite }) {
	const send = (ev) => {
		ev.preventDefault();
		const x = ev.target.elements[id].valueAsNumber;
		if (!Number.isNaN(x)) onWrite(x);
	};
	return html`<form class="line" onSubmit=${send}>
		<label for=${id}>set${unitSymbol(schema.unit) ? " (" + unitSymbol(schema.unit) + ")" : ""}</label>
		<input id=${id} type="number" data-test="control" disabled=${!writable} min=${schema.minimum} max=${schema.maximum} step=${step} />
		<button type="submit" data-test="send" disabled=${!writable}>Set</button>
	</form>`;
}

// Range is a slider written when released. While it is moved it shows
// where it is, not the device's value, which may change meanwhile.
function Range({ id, schema, step, cur, writable, onWrite }) {
	const [draft, setDraft] = useState(null);
	const min = schema.minimum;
	const max = schema.maximum;
	const shown = draft ?? (typeof cur === "number" ? cur : min);
	const release = (ev) => {
		setDraft(null);
		onWrite(Number(ev.target.value));
	};
	return html`<label for=${id}>set <output>${showValue(shown, schema)}</output>
		<input id=${id} type="range" data-test="control" disabled=${!writable} min=${min} max=${max} step=${step}
			value=${shown} onInput=${(ev) => setDraft(Number(ev.target.value))} onChange=${release} /></label>`;
}

// stepOf is a range's step: a hundredth of it, rounded to a power of ten.
function stepOf(min, max) {
	const span = max - min;
	if (!(span > 0)) return "any";
	return Math.pow(10, Math.floor(Math.log10(span / 100)));
}

// Line sends a line to a line device and shows the instrument's answer.
function Line({ id, writable, onWrite, reply }) {
	const send = (ev) => {
		ev.preventDefault();
		const input = ev.target.elements[id];
		if (input.value !== "") onWrite(input.value);
	};
	return html`<form class="line" onSubmit=${send}>
		<label for=${id}>line</label>
		<input id=${id} type="text" data-test="control" disabled=${!writable} autocomplete="off" spellcheck="false" />
		<button type="submit" data-test="send" disabled=${!writable}>Send</button>
		<output data-test="reply">${reply ?? ""}</output>
	</form>`;
}

// Confirmations: the writes waiting for an admin, and the ones resolved.
// The list is read at each connection and follows
// hal/confirmationRequested and hal/confirmationResolved. A pending one
// shows in the tab's title, and as a browser notification when the
// operator allowed them. Its card shows the device's value now beside the
// value asked for (live from the bench's values, else the hub's current),
// so that an approver sees what approving would change; a superseded one
// says whose write took its place.
import { html, useEffect, useState } from "./vendor/htm/standalone.module.js";
import { explain } from "./hub.js";
import { isAdmin, secondsLeft, showValue, when, who } from "./format.js";
import { useNow } from "./now.js";

const title = "Gateway console";

// useConfirmations returns {list, put}: the confirmations, newest id
// first, and put(c) to add or replace one (a write answered pending puts
// its own at once); it keeps the tab's title saying how many are pending.
export function useConfirmations(conn) {
	const [byId, setById] = useState({});
	// put never takes a resolved request back to pending (a write's
	// answer may come after its resolution's notification).
	const put = (c) => setById((m) => (m[c.id] && m[c.id].status !== "pending" && c.status === "pending" ? m : { ...m, [c.id]: c }));
	useEffect(() => {
		if (!conn) return;
		const s = conn.session;
		const offs = [
			s.on("hal/confirmationRequested", (p) => { put(p.confirmation); notify(p.confirmation); }),
			s.on("hal/confirmationResolved", (p) => put(p.confirmation)),
		];
		setById({}); // a restarted gateway keeps none
		listAll(s).then((list) => setById(Object.fromEntries(list.map((c) => [c.id, c]))), () => {});
		return () => offs.forEach((off) => off());
	}, [conn]);
	const list = Object.values(byId).sort((a, b) => (a.id < b.id ? 1 : -1));
	const pending = list.filter((c) => c.status === "pending").length;
	useEffect(() => {
		document.title = pending ? "(" + pending + ") " + title : title;
	}, [pending]);
	return { list, put };
}

// listAll follows the list's pages (after/next).
async function listAll(session) {
	const all = [];
	let after;
	for (;;) {
		const page = await session.call("hal/confirmations/list", after ? { after } : {});
		all.push(...page.confirmations);
		if (!page.next) return all;
		after = page.next;
	}
}

// notify shows a browser notification for a new request, when the
// operator allowed notifications and is looking at another tab.
function notify(c) {
	if (typeof Notification === "undefined" || Notification.permission !== "granted" || !document.hidden) return;
	new Notification("Confirmation requested", { body: who(c.requestedBy) + ": " + c.device + " = " + JSON.stringify(c.value), tag: c.id });
}

// values are the bench's live device values (useDevices).
// live is false while the page reconnects: nothing can be approved then.
// devices are the bench's, whose schemas give values their units.
export function Confirmations({ conn, list, values, devices = [], live = true }) {
	const schemas = Object.fromEntries(devices.map((d) => [d.id, d.schema || {}]));
	const now = useNow();
	const [perm, setPerm] = useState(typeof Notification === "undefined" ? "unsupported" : Notification.permission);
	const ask = () => Notification.requestPermission().then(setPerm);
	return html`<section data-test="confirmations">
		<h2>Confirmations</h2>
		${perm === "default" && html`<button type="button" class="secondary" onClick=${ask}>Notify me of new requests</button>`}
		${list.length === 0 && html`<p class="muted">No confirmation requests.</p>`}
		<ul class="list">${list.map((c) => html`<${Item} key=${c.id} conn=${conn} c=${c} now=${now} current=${values[c.device] || c.current} connected=${live} schema=${schemas[c.device]} />`)}</ul>
	</section>`;
}

function Item({ conn, c, now, current, connected, schema }) {
	// A value with its device's unit ("40 %"); as JSON for a device the
	// page does not list.
	const val = (x) => (schema ? showValue(x, schema) : JSON.stringify(x));
	const [reason, setReason] = useState("");
	const [error, setError] = useState("");
	const resolve = async (method) => {
		setError("");
		try {
			await conn.session.call(method, method.endsWith("reject") && reason ? { id: c.id, reason } : { id: c.id });
		} catch (err) {
			setError(explain(err));
		}
	};
	const open = c.status === "pending";
	const rid = "reason-" + c.id;
	return html`<li class="card" data-test="confirmation" data-id=${c.id}>
		<p><strong>${c.device}</strong> asks: <code data-test="asked">${val(c.value)}</code>${open && current && html` · now: <code data-test="current">${val(current.value)}</code>`} · ${c.id}</p>
		<p>asked by ${who(c.requestedBy)} at ${when(c.createdAt)}${c.reason ? ": " + c.reason : ""}</p>
		<p class=${"status-" + c.status}>${open ? secondsLeft(c.expiresAt, now) + " s left" : resolution(c, val)}</p>
		${open && isAdmin(conn.init.principal) && html`<div class="actions">
			<label for=${rid}>reason (for a rejection)</label>
			<input id=${rid} data-test="reason" value=${reason} onInput=${(ev) => setReason(ev.target.value)} />
			<button type="button" data-test="approve" disabled=${!connected} onClick=${() => resolve("hal/confirmations/approve")}>Approve</button>
			<button type="button" class="danger" data-test="reject" disabled=${!connected} onClick=${() => resolve("hal/confirmations/reject")}>Reject</button>
		</div>`}
		${error && html`<p class="error" role="alert">${error}</p>`}
	</li>`;
}

// resolution says how a request ended, and by whom; val shows a value.
function resolution(c, val) {
	if (c.status === "superseded" && c.supersededBy) return superseded(c.supersededBy, val) + (c.resolvedAt ? " at " + when(c.resolvedAt) : "") + ": not applied";
	const by = c.approvedBy || c.rejectedBy || c.resolvedBy;
	let s = c.status + (by ? " by " + who(by) : "") + (c.resolvedAt ? " at " + when(c.resolvedAt) : "");
	if (c.resolveReason) s += ": " + c.resolveReason;
	if (c.error) s += " (" + (c.error.message || c.error.reason) + ")";
	return s;
}

// superseded says what took a request's place: a write of the device, or
// its creator's newer request.
function superseded(by, val) {
	if (by.request) return "superseded by " + who(by.principal) + "'s newer request " + by.request + " for " + val(by.value);
	return "superseded by " + who(by.principal) + "'s write of " + val(by.value);
}

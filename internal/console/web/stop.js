// The emergency stop: a STOP button on every view (one tap, any token
// that may write), and while the gateway is stopped a banner on every
// view saying who stopped it, why, since when, and what the stop could
// not make safe. An admin resumes behind a confirm dialog.
import { html, useEffect, useRef, useState } from "./vendor/htm/standalone.module.js";
import { explain } from "./hub.js";
import { canWrite, isAdmin, when, who } from "./format.js";

// useStop follows the stop: initialize's stopped (with the devices the
// stop failed to make safe and left as they are, but not those it made
// safe), then hal/stopped and hal/resumed. Null when not stopped.
export function useStop(conn) {
	const [stopped, setStopped] = useState(null);
	useEffect(() => {
		if (!conn) return;
		setStopped(conn.init.stopped || null);
		const offs = [
			conn.session.on("hal/stopped", (p) => setStopped(p)),
			conn.session.on("hal/resumed", () => setStopped(null)),
		];
		return () => offs.forEach((off) => off());
	}, [conn]);
	return [stopped, setStopped];
}

// StopBar is the STOP button, the banner while stopped, and the resume.
// While the page is not live (reconnecting) a press could reach no one:
// the STOP is greyed and disabled, and says so, rather than look as if it
// worked.
export function StopBar({ conn, stopped, setStopped, live = true }) {
	const [error, setError] = useState("");
	const p = conn.init.principal;
	const stop = async () => {
		setError("");
		try {
			const res = await conn.session.call("hal/stop", { reason: "STOP pressed in the console" });
			setStopped({ principal: p, reason: "STOP pressed in the console", ts: new Date().toISOString(), ...res });
		} catch (err) {
			setError("The stop failed: " + explain(err));
		}
	};
	const title = !live ? "Not connected: a press now reaches no gateway" :
		canWrite(p) ? "Emergency stop: every output to its safe value" : "A read token cannot stop the gateway";
	return html`<div class="stopbar">
		<button type="button" class=${"stop" + (live ? "" : " offline")} data-test="stop" onClick=${stop} disabled=${!live || !canWrite(p)}
			title=${title}>STOP</button>
		${!live && html`<p class="error" data-test="stop-offline">STOP is not live: the page cannot reach the gateway now, so pressing it would stop nothing. Use the machine's own stop, or wait for the connection.</p>`}
		${error && html`<p class="error" role="alert">${error}</p>`}
	</div>
	${stopped && html`<${Banner} conn=${conn} stopped=${stopped} setStopped=${setStopped} live=${live} />`}`;
}

function Banner({ conn, stopped, setStopped, live }) {
	const failed = stopped.failed || [];
	const left = stopped.leftAsIs || [];
	return html`<section class="banner" data-test="stop-banner" role="alert">
		<strong>EMERGENCY STOP</strong> engaged by ${who(stopped.principal)} since ${when(stopped.ts)}${stopped.reason ? ": " + stopped.reason : ""}.
		${failed.length > 0 && html`<p>Failed to go safe: ${failed.map((f) => html`<span class="chip">${f.device} (${f.error && f.error.message})</span> `)}</p>`}
		${left.length > 0 && html`<p>Left as they are: ${left.map((l) => html`<span class="chip">${l.device} (${l.reason})</span> `)}</p>`}
		${!stopped.safeApplied && html`<p class="muted">The stop began before this page connected: the devices it made safe are in the audit log.</p>`}
		<p data-test="stop-controls">While stopped, controls are off; a device with a safe value offers to write it (the only write a stop allows).</p>
		${isAdmin(conn.init.principal) && html`<${Resume} conn=${conn} setStopped=${setStopped} live=${live} />`}
	</section>`;
}

// Resume asks again in a modal <dialog> (Escape or Cancel closes it)
// before it lifts the stop.
function Resume({ conn, setStopped, live }) {
	const dialog = useRef(null);
	const [error, setError] = useState("");
	const confirm = async () => {
		setError("");
		try {
			const res = await conn.session.call("hal/resume");
			dialog.current.close();
			if (!res.stopped) setStopped(null);
			else setError("Still stopped: a stop came while resuming.");
		} catch (err) {
			setError(explain(err));
		}
	};
	return html`<button type="button" data-test="resume" disabled=${!live} onClick=${() => dialog.current.showModal()}>Resume…</button>
		${error && html`<p class="error" role="alert">${error}</p>`}
		<dialog ref=${dialog}>
			<p>Lift the emergency stop? Writes are accepted again; no earlier value is restored.</p>
			<button type="button" data-test="resume-confirm" onClick=${confirm}>Resume</button>
			<button type="button" class="secondary" onClick=${() => dialog.current.close()}>Cancel</button>
		</dialog>`;
}

// Adapters: each adapter's state, restarts, last exit and strikes
// (gateway/adapters.status, an admin token not limited to some devices),
// read again every few seconds while the view is open (and the tab
// shown); an admin may reset one that was given up on.
import { html, useEffect, useState } from "./vendor/htm/standalone.module.js";
import { explain } from "./hub.js";
import { isAdmin, when } from "./format.js";

const every = 3000;

export function Adapters({ conn }) {
	const [list, setList] = useState(null);
	const [error, setError] = useState("");
	const [tick, setTick] = useState(0);
	useEffect(() => {
		const t = setInterval(() => document.hidden || setTick((n) => n + 1), every);
		return () => clearInterval(t);
	}, []);
	useEffect(() => {
		conn.session.call("gateway/adapters.status").then((res) => { setList(res.adapters || []); setError(""); },
			(err) => setError(explain(err)));
	}, [conn, tick]);
	const reset = (name) => conn.session.call("gateway/adapters.reset", { name }).then(() => setTick((n) => n + 1),
		(err) => setError("reset " + name + ": " + explain(err)));
	return html`<section data-test="adapters">
		<h2>Adapters</h2>
		${error && html`<p class="error" role="alert">${error}</p>`}
		${list && list.length === 0 && html`<p class="muted">No adapters are configured.</p>`}
		${list && list.map((a) => html`<${Adapter} key=${a.name} a=${a} admin=${isAdmin(conn.init.principal)} onReset=${reset} />`)}
	</section>`;
}

function Adapter({ a, admin, onReset }) {
	const log = a.stderr || {};
	return html`<article class="card">
		<h3>${a.name} <span class=${"adapter-" + a.state}>${a.state}</span></h3>
		${(a.reason || a.detail) && html`<p>${a.reason}${a.detail ? ": " + a.detail : ""}</p>`}
		<p>restarts ${a.restarts}, crashes ${a.crashes} (${a.consecutiveCrashes} in a row), strikes ${a.strikes} now, ${a.strikesTotal} in all</p>
		${a.lastExit && html`<p>last exit: <code>${a.lastExit}</code></p>`}
		${a.since && html`<p class="muted">running since ${when(a.since)}${a.pid ? ", pid " + a.pid : ""}</p>`}
		<p class="muted">log: ${log.lines || 0} lines${log.droppedLines ? ", " + log.droppedLines + " dropped" : ""}${log.cut ? ", " + log.cut + " cut" : ""} (in the state directory; <code>gateway adapter logs ${a.name}</code>)</p>
		${a.devices && html`<p class="muted">devices: ${a.devices.join(", ")}</p>`}
		${admin && html`<button type="button" onClick=${() => onReset(a.name)}>Reset</button>`}
	</article>`;
}

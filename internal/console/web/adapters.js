// Adapters: each adapter's state, restarts, last exit and strikes
// (gateway/adapters.status, an admin token not limited to some devices),
// read again every few seconds while the view is open (and the tab
// shown); an admin may reset one that was given up on. Each adapter's
// last log lines (gateway/adapters.logs) are read only while their
// <details> is open, so that a closed view costs no log reads.
import { html, useEffect, useState } from "./vendor/htm/standalone.module.js";
import { explain } from "./hub.js";
import { isAdmin, when } from "./format.js";

const every = 3000;
// logLines is how many of an adapter's last log lines are shown.
const logLines = 20;

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
		${list && list.map((a) => html`<${Adapter} key=${a.name} a=${a} conn=${conn} tick=${tick} admin=${isAdmin(conn.init.principal)} onReset=${reset} />`)}
	</section>`;
}

function Adapter({ a, conn, tick, admin, onReset }) {
	const log = a.stderr || {};
	return html`<article class="card">
		<h3>${a.name} <span class=${"adapter-" + a.state}>${a.state}</span></h3>
		${(a.reason || a.detail) && html`<p>${a.reason}${a.detail ? ": " + a.detail : ""}</p>`}
		<p>restarts ${a.restarts}, crashes ${a.crashes} (${a.consecutiveCrashes} in a row), strikes ${a.strikes} now, ${a.strikesTotal} in all</p>
		${a.lastExit && html`<p>last exit: <code>${a.lastExit}</code></p>`}
		${a.since && html`<p class="muted">running since ${when(a.since)}${a.pid ? ", pid " + a.pid : ""}</p>`}
		<p class="muted">log: ${log.lines || 0} lines${log.droppedLines ? ", " + log.droppedLines + " dropped" : ""}${log.cut ? ", " + log.cut + " cut" : ""} (in the state directory; <code>gateway adapter logs ${a.name}</code>)</p>
		<${AdapterLogs} name=${a.name} conn=${conn} tick=${tick} />
		${a.devices && html`<p class="muted">devices: ${a.devices.join(", ")}</p>`}
		${admin && html`<button type="button" onClick=${() => onReset(a.name)}>Reset</button>`}
	</article>`;
}

// AdapterLogs is the adapter's last log lines, collapsed; opened, they
// are read at once and again with the status.
function AdapterLogs({ name, conn, tick }) {
	const [open, setOpen] = useState(false);
	const [logs, setLogs] = useState(null);
	const [error, setError] = useState("");
	useEffect(() => {
		if (!open) return;
		let live = true;
		conn.session.call("gateway/adapters.logs", { name, lines: logLines }).then(
			(res) => { if (live) { setLogs(res); setError(""); } },
			(err) => { if (live) setError(explain(err)); });
		return () => { live = false; };
	}, [open, conn, name, tick]);
	return html`<details data-test="adapter-logs" data-adapter=${name} onToggle=${(e) => setOpen(e.currentTarget.open)}>
		<summary>last log lines</summary>
		${error && html`<p class="error" role="alert">${error}</p>`}
		${logs && logs.omitted > 0 && html`<p class="muted">${logs.omitted} older lines left out (too long for one message)</p>`}
		${logs && (logs.lines.length === 0 ? html`<p class="muted">no lines yet</p>` : html`<pre class="log">${logs.lines.join("\n")}</pre>`)}
	</details>`;
}

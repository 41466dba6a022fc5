// The audit log, newest first. hal/audit/list pages forward from a seq;
// there is no notification for new entries, so while this view is open
// (and only then, and not while the tab is hidden) it asks every few
// seconds for the entries after the last one it has, following `next`.
// It keeps the newest entries only.
import { html, useEffect, useState } from "./vendor/htm/standalone.module.js";
import { explain } from "./hub.js";
import { when, who } from "./format.js";

const keep = 500;
const every = 2000;

export function Audit({ conn }) {
	const [entries, setEntries] = useState([]); // oldest first
	const [error, setError] = useState("");
	const [device, setDevice] = useState("");
	const [principal, setPrincipal] = useState("");
	useEffect(() => {
		let since = 0;
		let timer = null;
		let live = true;
		const follow = async () => {
			if (document.hidden && since > 0) { // a tab in the background asks for nothing
				timer = setTimeout(follow, every);
				return;
			}
			try {
				for (;;) {
					const page = await conn.session.call("hal/audit/list", { since, limit: 1000 });
					if (!live) return;
					const got = page.entries || [];
					if (got.length) setEntries((es) => es.concat(got).slice(-keep));
					since = page.next ?? (got.length ? got[got.length - 1].seq : since);
					if (page.next == null) break;
				}
				setError("");
			} catch (err) {
				if (live) setError(explain(err));
			}
			if (live) timer = setTimeout(follow, every);
		};
		setEntries([]);
		follow();
		return () => { live = false; clearTimeout(timer); };
	}, [conn]);
	const shown = entries.filter((e) => (!device || (e.device || "").includes(device)) &&
		(!principal || who(e.principal).includes(principal))).reverse();
	return html`<section data-test="audit">
		<h2>Audit log</h2>
		<div class="filters">
			<label for="f-device">device</label><input id="f-device" value=${device} onInput=${(ev) => setDevice(ev.target.value)} />
			<label for="f-principal">who</label><input id="f-principal" value=${principal} onInput=${(ev) => setPrincipal(ev.target.value)} />
		</div>
		${error && html`<p class="error" role="alert">${error}</p>`}
		<table>
			<thead><tr><th>#</th><th>Time</th><th>Who</th><th>Action</th><th>Device</th><th>Value</th><th>Outcome</th></tr></thead>
			<tbody>${shown.map((e) => html`<tr key=${e.seq} data-test="audit-entry">
				<td>${e.seq}</td><td>${when(e.ts)}</td><td>${who(e.principal)}</td><td>${e.action}</td>
				<td>${e.device || ""}</td><td>${e.value === undefined ? "" : JSON.stringify(e.value)}</td>
				<td>${e.outcome}${e.rule ? " (" + e.rule + ")" : ""}${e.reason ? ": " + e.reason : ""}${e.count ? " ×" + e.count : ""}</td>
			</tr>`)}</tbody>
		</table>
		<p class="muted">The newest ${keep} entries; <code>gateway audit</code> reads the whole log.</p>
	</section>`;
}

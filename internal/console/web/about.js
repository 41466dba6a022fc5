// About: which gateway this page is connected to, and the fingerprint of
// its TLS certificate (gateway/status, any token): what an operator
// compares with what the browser shows for the https:// page, and with
// `gateway status` on the gateway itself (docs/console.md).
import { html, useEffect, useState } from "./vendor/htm/standalone.module.js";

export function About({ conn }) {
	const [st, setSt] = useState(null);
	useEffect(() => {
		let live = true;
		conn.session.call("gateway/status").then((res) => { if (live) setSt(res); }, () => {});
		return () => { live = false; };
	}, [conn]);
	if (!st) return null;
	return html`<footer class="about muted" data-test="about">
		<p>Gateway <strong>${st.name}</strong>${st.id && html`, id <code>${st.id}</code>`}, ${st.version}, board ${st.board}</p>
		<p data-test="about-fingerprint">Certificate SHA-256: ${st.fingerprint
			? html`<code class="fingerprint">${st.fingerprint}</code>${location.protocol === "https:" ? "" : " (this page is not over https)"}`
			: "none (no TLS listener)"}</p>
	</footer>`;
}

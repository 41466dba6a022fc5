// The operator console, first step: log in with a token, connect to the
// Hub as an ordinary OpenHAL client, and list the devices that token may
// see. The token is kept in this tab's sessionStorage only: never in a
// URL or a cookie.
import { html, render, useEffect, useState } from "./vendor/htm/standalone.module.js";
import { HubError, Session, explain, hubURL } from "./hub.js";

const tokenKey = "gateway.token";

function App() {
	const [token, setToken] = useState(() => sessionStorage.getItem(tokenKey));
	const [error, setError] = useState("");
	const [hub, setHub] = useState(null); // {principal, devices} once listed
	const [attempt, setAttempt] = useState(0); // "Connect again" bumps it

	useEffect(() => {
		if (!token) return;
		let closedByUs = false;
		let ready = false; // before, a failure reaches the catch below
		const s = new Session(hubURL(), () => {
			if (closedByUs || !ready) return; // a later session may be up already
			setError("The connection to the gateway closed.");
			setHub(null);
		});
		(async () => {
			const init = await s.initialize(token);
			const list = await s.call("hal/devices/list");
			ready = true;
			setError("");
			setHub({ principal: init.principal, devices: list.devices });
		})().catch((err) => {
			if (closedByUs) return;
			setError(explain(err));
			if (err instanceof HubError) {
				// Refused: ask for another token. A network failure keeps
				// it, for "Connect again".
				sessionStorage.removeItem(tokenKey);
				setToken(null);
			}
		});
		return () => {
			closedByUs = true;
			s.close();
		};
	}, [token, attempt]);

	const login = (t) => {
		sessionStorage.setItem(tokenKey, t);
		setError("");
		setToken(t);
	};
	const logout = () => {
		sessionStorage.removeItem(tokenKey);
		setError("");
		setToken(null);
	};

	if (!token) return html`<${Login} error=${error} onLogin=${login} />`;
	if (!hub) {
		return html`<h1>Gateway console</h1>
			${error ? html`<p class="error" role="alert">${error}</p>` : html`<p class="muted">Connecting…</p>`}
			${error && html`<button type="button" onClick=${() => { setError(""); setAttempt(attempt + 1); }}>Connect again</button>`}
			<button type="button" onClick=${logout}>Log out</button>`;
	}
	return html`<${Bench} hub=${hub} onLogout=${logout} />`;
}

// Login asks for a token. The input has no name and the form no action:
// the form is never submitted, so the token cannot end up in a URL.
function Login({ error, onLogin }) {
	const submit = (ev) => {
		ev.preventDefault();
		const t = ev.target.elements.token.value.trim();
		if (t) onLogin(t);
	};
	return html`<h1>Gateway console</h1>
		<form onSubmit=${submit}>
			<label for="token">Token</label>
			<input id="token" type="password" autocomplete="off" spellcheck="false" required autofocus />
			<p class="muted">Paste a token made with <code>gateway token add</code> (an operator's, or the admin token in the state directory's <code>admin.token</code>). It is kept in this tab only.</p>
			${error && html`<p class="error" role="alert">${error}</p>`}
			<button type="submit">Log in</button>
		</form>`;
}

// Bench lists the devices the token may see.
function Bench({ hub, onLogout }) {
	const p = hub.principal;
	return html`<header>
			<h1>Gateway console</h1>
			<span class="muted">${p.kind} <strong>${p.name}</strong>, scope ${p.scope}</span>
			<button type="button" onClick=${onLogout}>Log out</button>
		</header>
		<table>
			<thead><tr><th>Device</th><th>Kind</th><th>State</th><th>Risk</th><th>Source</th></tr></thead>
			<tbody>${hub.devices.map((d) => html`<${DeviceRow} key=${d.id} d=${d} />`)}</tbody>
		</table>
		${hub.devices.length === 0 && html`<p class="muted">This token may see no device.</p>`}`;
}

function DeviceRow({ d }) {
	return html`<tr>
		<td><strong>${d.label || d.id}</strong><br /><code class="muted">${d.id}</code></td>
		<td>${d.kind}</td>
		<td class=${"state-" + d.state}>${d.state}${d.fault ? ": " + d.fault : ""}</td>
		<td>${d.risk}</td>
		<td>${d.source}</td>
	</tr>`;
}

render(html`<${App} />`, document.getElementById("app"));

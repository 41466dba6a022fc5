// The operator console: log in with a token, then the views over one
// OpenHAL connection to the Hub, as an ordinary client. The token is
// kept in this tab's sessionStorage only: never in a URL or a cookie.
// Views are hash routes (#/bench, #/confirmations, #/adapters, #/audit);
// the STOP and the stop banner are on every one.
import { html, render, useEffect, useState } from "./vendor/htm/standalone.module.js";
import { staleText, statusText, useConnection } from "./connection.js";
import { Bench, useDevices } from "./bench.js";
import { Confirmations, useConfirmations } from "./confirmations.js";
import { StopBar, useStop } from "./stop.js";
import { Adapters } from "./adapters.js";
import { Audit } from "./audit.js";
import { About } from "./about.js";

const tokenKey = "gateway.token";
const views = ["bench", "confirmations", "adapters", "audit"];

function App() {
	const [token, setToken] = useState(() => sessionStorage.getItem(tokenKey));
	const [error, setError] = useState("");
	const refused = (why) => {
		sessionStorage.removeItem(tokenKey);
		setError(why);
		setToken(null);
	};
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
	return html`<${Console} token=${token} onRefused=${refused} onLogout=${logout} />`;
}

// Console is the logged-in page: the state every view shares lives here,
// so that it follows the notifications whichever view is shown.
function Console({ token, onRefused, onLogout }) {
	const { conn, status } = useConnection(token, onRefused);
	const { devices, values } = useDevices(conn);
	const { list: confirmations, put: putConfirmation } = useConfirmations(conn);
	const [stopped, setStopped] = useStop(conn);
	const view = useView();
	const p = conn && conn.init.principal;
	const pending = confirmations.filter((c) => c.status === "pending").length;
	// live: the page's values and controls are the gateway's now. While it
	// reconnects they are the last ones it heard, greyed, and nothing can
	// be sent.
	const live = status.state === "connected";
	return html`<header>
			<h1>Gateway console</h1>
			${p && html`<span class="muted">${p.kind} <strong>${p.name}</strong>, scope ${p.scope}</span>`}
			<button type="button" class="secondary" data-test="logout" onClick=${onLogout}>Log out</button>
		</header>
		<p class=${"conn conn-" + status.state} data-test="conn-status" role="status">${statusText(status)}</p>
		${conn && !live && html`<p class="stale-note" data-test="stale">${staleText(status)}</p>`}
		${conn && html`<${StopBar} conn=${conn} stopped=${stopped} setStopped=${setStopped} live=${live} />
		<nav>${views.map((v) => html`<a href=${"#/" + v} data-test=${"nav-" + v} aria-current=${v === view ? "page" : undefined}>${v}${v === "confirmations" && pending ? " (" + pending + ")" : ""}</a>`)}</nav>
		${view === "bench" && html`<${Bench} conn=${conn} devices=${devices} values=${values} confirmations=${confirmations} onPending=${putConfirmation} live=${live} lostAt=${status.lostAt} stopped=${stopped} />`}
		${view === "confirmations" && html`<${Confirmations} conn=${conn} list=${confirmations} values=${values} devices=${devices} live=${live} />`}
		${view === "adapters" && html`<${Adapters} conn=${conn} />`}
		${view === "audit" && html`<${Audit} conn=${conn} />`}
		<${About} conn=${conn} />`}`;
}

// useView is the view the location's hash names, the bench by default.
function useView() {
	const read = () => {
		const v = location.hash.replace(/^#\/?/, "");
		return views.includes(v) ? v : "bench";
	};
	const [view, setView] = useState(read);
	useEffect(() => {
		const f = () => setView(read());
		addEventListener("hashchange", f);
		return () => removeEventListener("hashchange", f);
	}, []);
	return view;
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
			<input id="token" type="password" data-test="login-token" autocomplete="off" spellcheck="false" required autofocus />
			<p class="muted">Paste a token made with <code>gateway token add</code> (an operator's, or the admin token in the state directory's <code>admin.token</code>). It is kept in this tab only.</p>
			${error && html`<p class="error" role="alert" data-test="login-error">${error}</p>`}
			<button type="submit" data-test="login-submit">Log in</button>
		</form>`;
}

// The page's static heading (shown before the modules load) gives way
// to the console.
const root = document.getElementById("app");
root.textContent = "";
render(html`<${App} />`, root);

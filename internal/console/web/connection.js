// useConnection keeps the console connected to the Hub with a token: it
// logs in, and when the connection ends it tries again by itself, waiting
// longer after each failure (half a second, doubling to ten), until the
// gateway is back. A gateway that answers busy (no connection free for
// the token now, or the connection refused with 503) is tried again the
// same way: room comes as other clients leave. A new bootId on the way
// back means the gateway restarted: the status says so, and every view
// reads its state again (they depend on the session).
import { useEffect, useState } from "./vendor/htm/standalone.module.js";
import { HubError, Session, explain, hubURL } from "./hub.js";
import { when } from "./format.js";

const firstDelay = 500;
const maxDelay = 10000;

// busy is the Hub's BUSY error code: hal/initialize found no connection
// free for the token (data.reason "full" or "token_full"), which another
// try may find.
const busy = -32010;

// useConnection returns {conn, status}: conn is {session, init} of the
// connection up now (the last one while reconnecting, so the page stays
// on screen), status {state: "connecting"|"connected"|"reconnecting",
// restarted, error, retryIn, lostAt}: lostAt is when the connection
// that was up ended (ms; none before the first one). A token the Hub refuses calls
// onRefused(sentence) and stops trying; a busy Hub is tried again.
export function useConnection(token, onRefused) {
	const [conn, setConn] = useState(null);
	const [status, setStatus] = useState({ state: "connecting" });

	useEffect(() => {
		if (!token) return;
		let done = false;
		let timer = null;
		let delay = firstDelay;
		let bootId = null;
		let restarted = null;
		let current = null;
		let up = false; // a connection was up, and none since it ended
		let lostAt = null;

		const retry = (error) => {
			if (done) return;
			const wait = delay;
			delay = Math.min(delay * 2, maxDelay);
			if (up) lostAt = Date.now();
			up = false;
			setStatus({ state: "reconnecting", restarted, error, retryIn: wait, lostAt });
			timer = setTimeout(connect, wait);
		};
		const connect = () => {
			const s = new Session(hubURL(), () => fail(s, "the connection to the gateway closed"));
			current = s;
			(async () => {
				const init = await s.initialize(token);
				if (done) return;
				if (bootId && init.bootId !== bootId) restarted = init.bootId;
				bootId = init.bootId;
				delay = firstDelay;
				up = true;
				lostAt = null;
				setConn({ session: s, init });
				setStatus({ state: "connected", restarted });
			})().catch((err) => {
				if (done || !(err instanceof HubError) || err.code === busy) return fail(s, explain(err));
				done = true;
				s.close();
				onRefused(explain(err));
			});
		};
		// fail schedules one new try per session, however its end shows
		// (an error, a close, or both).
		const fail = (s, why) => {
			if (done || s !== current) return;
			current = null;
			s.close();
			retry(why);
		};
		connect();
		return () => {
			done = true;
			clearTimeout(timer);
			if (current) current.close();
			setConn(null);
			setStatus({ state: "connecting" });
		};
	}, [token]);

	return { conn, status };
}

// statusText is the line the page shows about the connection.
export function statusText(st) {
	const restarted = st.restarted ? "gateway restarted (new run " + st.restarted.slice(0, 8) + "), " : "";
	switch (st.state) {
	case "connected":
		return restarted + "connected";
	case "reconnecting":
		return restarted + "reconnecting (" + st.error + "; next try in " + Math.round(st.retryIn / 100) / 10 + " s)";
	default:
		return "connecting…";
	}
}

// staleText says, while the page reconnects, since when what it shows is
// old and what does not work meanwhile.
export function staleText(st) {
	const since = st.lostAt ? " since " + when(new Date(st.lostAt).toISOString()) : "";
	return "Not live" + since + ": the values shown are the last ones received, and nothing can be sent (no write, no STOP) until the connection is back.";
}

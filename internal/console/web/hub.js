// A connection to the gateway's Hub: OpenHAL over the WebSocket at /hal of
// the origin that served the page, one JSON-RPC message per text frame.
// The console is an ordinary client: the token goes in hal/initialize's
// params (a browser cannot set headers on a WebSocket), never in the URL.

// hubURL is the Hub's WebSocket on this page's own origin, so that the
// Hub's Origin check passes and the CSP's connect-src allows it.
export function hubURL() {
	return (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/hal";
}

// HubError is a JSON-RPC error answer: code, message and data.reason.
export class HubError extends Error {
	constructor(err) {
		super(err.message || "error " + err.code);
		this.code = err.code;
		this.data = err.data || {};
		this.reason = this.data.reason;
	}
}

// Session opens the WebSocket and matches answers to requests by id.
// onClose runs once when the connection ends, whoever ended it.
export class Session {
	constructor(url, onClose) {
		this.next = 1;
		this.pending = new Map();
		this.listeners = new Map(); // method -> Set of functions
		this.ws = new WebSocket(url);
		this.opened = new Promise((resolve, reject) => {
			this.ws.onopen = () => resolve();
			this.ws.onerror = () => reject(new Error("cannot reach the gateway at " + url));
		});
		this.ws.onmessage = (ev) => this.receive(ev.data);
		this.ws.onclose = () => {
			for (const p of this.pending.values()) p.reject(new Error("the connection to the gateway closed"));
			this.pending.clear();
			if (onClose) onClose();
		};
	}

	// initialize runs the OpenHAL handshake with token and returns the
	// hal/initialize result (the principal, the hub's version, bootId).
	async initialize(token) {
		await this.opened;
		const result = await this.call("hal/initialize", {
			protocolVersion: "0.1",
			clientInfo: { name: "gateway-console", version: "0.1" },
			token,
		});
		this.notify("hal/initialized");
		return result;
	}

	// call sends a request and resolves with its result, or rejects with
	// a HubError.
	call(method, params = {}) {
		const id = this.next++;
		if (this.ws.readyState !== WebSocket.OPEN) return Promise.reject(new Error("not connected to the gateway"));
		return new Promise((resolve, reject) => {
			this.pending.set(id, { resolve, reject });
			this.ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
		});
	}

	notify(method, params = {}) {
		this.ws.send(JSON.stringify({ jsonrpc: "2.0", method, params }));
	}

	// on calls fn(params) for each notification of method, until the
	// function it returns is called: each view listens while it is shown.
	on(method, fn) {
		if (!this.listeners.has(method)) this.listeners.set(method, new Set());
		this.listeners.get(method).add(fn);
		return () => this.listeners.get(method).delete(fn);
	}

	// receive settles the request an answer is for, or hands a
	// notification to the views listening for it.
	receive(text) {
		let msg;
		try {
			msg = JSON.parse(text);
		} catch {
			return;
		}
		if (msg.method && msg.id === undefined) {
			for (const fn of this.listeners.get(msg.method) || []) fn(msg.params || {});
			return;
		}
		const p = msg.id !== undefined && this.pending.get(msg.id);
		if (!p) return;
		this.pending.delete(msg.id);
		if (msg.error) p.reject(new HubError(msg.error));
		else p.resolve(msg.result);
	}

	close() {
		this.ws.close(1000);
	}
}

// explain turns a failure to connect or log in into a sentence for the
// operator.
export function explain(err) {
	if (!(err instanceof HubError)) return err.message;
	switch (err.reason) {
	case "token_unknown":
	case "token_missing":
	case "token_invalid":
		return "The gateway does not know this token (mistyped, or revoked).";
	case "rate_limited":
		return "Too many failed logins from this address: wait a minute, then try again.";
	case "full":
		return "the gateway has no room for another client now";
	case "token_full":
		return "this token has as many connections open as one token may: close a tab or a program using it, or give it a token of its own";
	case "scope":
		return "This token may not do this: " + err.message + ".";
	case "device_limited":
		return "A token limited to some devices may not do this.";
	}
	return err.message + (err.reason ? " (" + err.reason + ")" : "");
}

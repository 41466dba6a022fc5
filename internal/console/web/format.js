// Small wordings shared by the views: who did something, when, a value
// with its unit, time left.

// who names a principal as the audit log and the CLI do: "agent bot".
export function who(p) {
	return p ? p.kind + " " + p.name : "?";
}

// when shows an RFC 3339 time as the browser's local time of day, with
// the date when it is not today.
export function when(ts) {
	if (!ts) return "";
	const d = new Date(ts);
	if (isNaN(d)) return String(ts);
	const today = new Date().toDateString() === d.toDateString();
	return today ? d.toLocaleTimeString() : d.toLocaleString();
}

// secondsLeft counts the whole seconds until ts, 0 once past.
export function secondsLeft(ts, now = Date.now()) {
	// now is a component's last tick, up to a second old when a new
	// request first shows: the clock read here keeps a 120 s lifetime
	// from showing 121.
	return Math.max(0, Math.ceil((new Date(ts) - Math.max(now, Date.now())) / 1000));
}

// showValue writes a device's value with its schema's unit; an object
// value shows each member with its own unit.
export function showValue(v, schema = {}) {
	if (v === undefined) return "—";
	if (v !== null && typeof v === "object") {
		const props = schema.properties || {};
		return Object.entries(v).map(([k, x]) => k + " " + showValue(x, props[k] || {})).join(", ");
	}
	if (typeof v === "number") v = Math.round(v * 1000) / 1000;
	return String(v) + (schema.unit ? " " + schema.unit : "");
}

// where says where a device is wired, from its descriptor's gateway
// extensions: its pin, and a chip on a bus ("ex1:GPA0 · mcp23017 at 0x20
// on /dev/i2c-1"); "" for a device that says nothing of it.
export function where(d) {
	if (d.modbus) return modbusWhere(d);
	let chip = d.chip || "";
	if (chip && d.address) chip += " at " + d.address;
	if (chip && d.bus) chip += " on " + d.bus;
	if (chip && d.channel !== undefined && !d.pin) chip += ", channel " + d.channel;
	return [d.pin, chip].filter(Boolean).join(" · ");
}

// modbusWhere says where an x.modbus value sits: "Modbus unit 1, holding
// 8193 (uint16 ×0.01) on /dev/ttyUSB0" (docs/protocol.md, x.modbus).
function modbusWhere(d) {
	const r = d.modbus;
	let enc = r.type;
	if (r.swap) enc += ", swap " + r.swap;
	if (r.scale && r.scale !== 1) enc += " ×" + r.scale;
	if (r.offset) enc += (r.offset < 0 ? " − " : " + ") + Math.abs(r.offset);
	return "Modbus unit " + d.address + ", " + r.table + " " + r.address + " (" + enc + ") on " + d.bus;
}

// canWrite says whether a token's scope may write at all.
export function canWrite(principal) {
	return principal.scope !== "read";
}

// isAdmin says whether a token may approve, reject, resume and reset.
export function isAdmin(principal) {
	return principal.scope === "admin";
}

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
	const unit = unitSymbol(schema.unit);
	return String(v) + (unit ? " " + unit : "");
}

// symbols are the SenML units (RFC 8428, RFC 8798) that people read
// another way: °C, not Cel. The JS copy of device/unitsymbol.go's table
// (e2e/browser's TestUnitSymbols holds the two the same); a unit not
// here reads as it is written.
const symbols = {
	"Cel": "°C",
	"%RH": "%",
	"%EL": "%",
	"/": "",
	"1/min": "rpm",
	"deg": "°",
	"W/m2": "W/m²",
	"m/s2": "m/s²",
	"m2": "m²",
	"m3": "m³",
	"m3/s": "m³/s",
	"ug/m3": "µg/m³",
	"us": "µs",
	"uS/cm": "µS/cm",
};

// unitSymbol is how a person reads a schema's unit (a SenML symbol, as
// descriptors carry it): "Cel" reads "°C", "%RH" reads "%"; "" for none.
// Every unit the console shows goes through it; what it sends keeps the
// SenML symbol.
export function unitSymbol(senml) {
	if (!senml) return "";
	return Object.hasOwn(symbols, senml) ? symbols[senml] : senml;
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

// History plots: one uPlot per series the gateway keeps (gateway/history,
// docs/protocol.md): a number or boolean device, or each number or
// boolean member of an object device. A value somebody writes (a PWM
// duty, a setpoint, an output) is held until the next one, so it is drawn
// as a step; a measured one (a sensor) as a line. Each plot is titled
// with its device's label, its y-axis with the unit people read (°C),
// its time axis with ticks at round times (ticks.js). It reads its series
// once, then appends the values hal/value brings. uPlot is the vendored
// IIFE build, loaded by index.html as a classic script: the global uPlot.
import { html, useEffect, useRef, useState } from "./vendor/htm/standalone.module.js";
import { unitSymbol } from "./format.js";
import { timeLabels, timeRange, timeSplits, timeStep } from "./ticks.js";

// kept is how many points a plot holds, as many as the gateway keeps.
const kept = 4096;
const plotted = new Set(["number", "integer", "boolean", "object"]);

// tickWidth is the room one time label needs, in CSS pixels.
const tickWidth = 90;

// Plots finds the series of the devices and draws one plot for each.
// While the page is not live (reconnecting) they are greyed and stop
// following now at lostAt: nothing is known of the values since.
export function Plots({ conn, devices, live, lostAt }) {
	const [series, setSeries] = useState([]);
	const shown = devices.filter((d) => plotted.has((d.schema || {}).type));
	const ids = shown.map((d) => d.id).join(" ");
	useEffect(() => {
		let on = true;
		// The values that come between the history's answers and each
		// plot's own listening (a plot listens once drawn) are kept here
		// and replayed by the plot, until every plot listens.
		const early = { list: [], waiting: new Set(), off: null };
		early.off = conn.session.on("hal/value", (p) => early.list.push(p));
		Promise.all(shown.map((d) => seriesOf(conn.session, d)))
			.then((all) => {
				if (!on) return;
				const flat = all.flat();
				flat.forEach((s) => { s.early = early; early.waiting.add(s.key); });
				if (flat.length === 0) early.off();
				setSeries(flat);
			});
		return () => { on = false; early.off(); };
	}, [conn, ids]);
	const until = useRef(null);
	until.current = live ? null : lostAt || Date.now();
	if (series.length === 0) return null;
	return html`<section class=${"plots" + (live ? "" : " stale")}><h2>History</h2>
		${series.map((s) => html`<${Plot} key=${s.key} conn=${conn} s=${s} until=${until} />`)}
	</section>`;
}

// seriesOf reads every series of a device: a device with several
// answers INVALID_PARAMS naming them in data.fields.
async function seriesOf(session, d) {
	const device = d.id;
	const one = (field) => session.call("gateway/history", field ? { device, field } : { device }).then((page) => ({
		key: page.field ? device + "." + page.field : device, device, field: page.field, kind: page.kind,
		t: page.samples ? page.samples.t : [], v: page.samples ? page.samples.v.map(Number) : [],
		...look(d, page.field, page.kind),
	}));
	try {
		const s = await one("");
		return s.kind ? [s] : [];
	} catch (err) {
		const fields = (err.data && err.data.fields) || [];
		return Promise.all(fields.map(one)).catch(() => []);
	}
}

// look is how a series is shown: its title (the device's label, and the
// member's name unless the label says it: "Temperature", not
// "sim.temperature.temperature"), the unit of its y-axis, and whether it
// is drawn as steps: a boolean, and any value of a writable device (a
// written value holds until the next write; a ramp between two would
// show values the device never had).
export function look(d, field, kind) {
	const schema = d.schema || {};
	const of = field ? (schema.properties || {})[field] || {} : schema;
	const label = d.label || d.id;
	const title = field && field.toLowerCase() !== label.toLowerCase() ? label + ": " + field : label;
	const unit = kind === "boolean" ? "" : unitSymbol(of.unit);
	return { title, unit, steps: kind === "boolean" || String(d.access).includes("w") };
}

// Plot draws one series and appends its device's values as they come.
// until.current, when set, is the time the last value is drawn to
// instead of now.
function Plot({ conn, s, until }) {
	const box = useRef(null);
	useEffect(() => {
		const data = [s.t.slice(), s.v.slice()];
		const end = () => until.current || Date.now();
		const u = new uPlot(options(s, box.current.clientWidth), toNow(data, end()), box.current);
		box.current.uplot = u; // for the browser tests: the data and axes drawn
		box.current.series = s;
		const fit = new ResizeObserver(() => u.setSize({ width: box.current.clientWidth, height: 160 }));
		fit.observe(box.current);
		// Drawn at most once a frame: values that stream in by the
		// thousand a second must not keep the page (and its STOP) busy.
		let frame = 0;
		const draw = () => { frame = 0; u.setData(toNow(data, end())); };
		const take = (p, after) => {
			if (p.device !== s.device) return;
			const x = s.field ? p.value && p.value[s.field] : p.value;
			const t = Date.parse(p.ts);
			const last = data[0].length ? data[0][data[0].length - 1] : -Infinity;
			if (x === undefined || t < last || (after && t === last)) return;
			data[0].push(t);
			data[1].push(Number(x));
			if (data[0].length > kept) { data[0].shift(); data[1].shift(); }
			frame = frame || requestAnimationFrame(draw);
		};
		// Values since the history was asked for: those it did not have.
		s.early.list.forEach((p) => take(p, true));
		const off = conn.session.on("hal/value", (p) => take(p, false));
		s.early.waiting.delete(s.key);
		if (s.early.waiting.size === 0) { s.early.off(); s.early.list = []; }
		const move = setInterval(draw, 10000); // the time axis follows now
		return () => { off(); cancelAnimationFrame(frame); clearInterval(move); fit.disconnect(); u.destroy(); };
	}, [conn, s]);
	return html`<figure class="plot" data-test="plot" data-series=${s.key}>
		<figcaption data-test="plot-title">${s.title}${s.unit ? " (" + s.unit + ")" : ""}</figcaption>
		<div ref=${box}></div>
	</figure>`;
}

// toNow draws the last value on to end (now): the device holds it still
// (a value is sent only when it changes).
function toNow([t, v], end) {
	if (t.length === 0) return [t, v];
	return [[...t, Math.max(end, t[t.length - 1])], [...v, v[v.length - 1]]];
}

// options sets uPlot up for times in milliseconds with round ticks, the
// page's colours, the unit on the y-axis, and steps for a written value
// (align 1: a value holds from its time until the next one). Exported
// for the browser tests, which draw known data with it.
export function options(s, width) {
	const css = getComputedStyle(document.documentElement);
	const fg = css.getPropertyValue("--muted").trim();
	const line = css.getPropertyValue("--accent").trim();
	const grid = { stroke: css.getPropertyValue("--line").trim() };
	const onOff = s.kind === "boolean";
	const step = (u) => timeStep(u.scales.x.max - u.scales.x.min, u.bbox.width / devicePixelRatio / tickWidth);
	const x = {
		stroke: fg, grid, ticks: grid,
		splits: (u, _i, min, max) => timeSplits(min, max, step(u)),
		values: (u, ticks) => timeLabels(ticks, step(u)),
	};
	const y = { stroke: fg, grid, label: s.unit || undefined, labelSize: s.unit ? 20 : 0,
		...(onOff ? { splits: () => [0, 1], values: (_, v) => v.map((b) => (b ? "on" : "off")) } : {}) };
	return {
		width, height: 160, ms: 1, legend: { show: false },
		scales: { x: { time: true, range: (_u, min, max) => timeRange(min, max) }, y: onOff ? { range: [-0.1, 1.1] } : {} },
		axes: [x, y],
		series: [{}, { label: s.title, stroke: line, width: 1.5, ...(s.steps ? { paths: uPlot.paths.stepped({ align: 1 }) } : {}) }],
	};
}

// History plots: one uPlot per series the gateway keeps (gateway/history,
// docs/protocol.md): a number or boolean device, or each number or
// boolean member of an object device. Booleans are drawn as steps. Each
// plot reads its series once, then appends the values hal/value brings.
// uPlot is the vendored IIFE build, loaded by index.html as a classic
// script: it is the global uPlot.
import { html, useEffect, useRef, useState } from "./vendor/htm/standalone.module.js";

// kept is how many points a plot holds, as many as the gateway keeps.
const kept = 4096;
const plotted = new Set(["number", "integer", "boolean", "object"]);

// Plots finds the series of the devices and draws one plot for each.
export function Plots({ conn, devices }) {
	const [series, setSeries] = useState([]);
	const ids = devices.filter((d) => plotted.has((d.schema || {}).type)).map((d) => d.id).join(" ");
	useEffect(() => {
		let live = true;
		Promise.all(ids.split(" ").filter(Boolean).map((id) => seriesOf(conn.session, id)))
			.then((all) => live && setSeries(all.flat()));
		return () => { live = false; };
	}, [conn, ids]);
	if (series.length === 0) return null;
	return html`<section class="plots"><h2>History</h2>
		${series.map((s) => html`<${Plot} key=${s.key} conn=${conn} s=${s} />`)}
	</section>`;
}

// seriesOf reads every series of a device: a device with several
// answers INVALID_PARAMS naming them in data.fields.
async function seriesOf(session, device) {
	const one = (field) => session.call("gateway/history", field ? { device, field } : { device }).then((page) => ({
		key: page.field ? device + "." + page.field : device, device, field: page.field, kind: page.kind,
		t: page.samples ? page.samples.t : [], v: page.samples ? page.samples.v.map(Number) : [],
	}));
	try {
		const s = await one("");
		return s.kind ? [s] : [];
	} catch (err) {
		const fields = (err.data && err.data.fields) || [];
		return Promise.all(fields.map(one)).catch(() => []);
	}
}

// Plot draws one series and appends its device's values as they come.
function Plot({ conn, s }) {
	const box = useRef(null);
	useEffect(() => {
		const data = [s.t.slice(), s.v.slice()];
		const u = new uPlot(options(s, box.current.clientWidth), toNow(data), box.current);
		const fit = new ResizeObserver(() => u.setSize({ width: box.current.clientWidth, height: 160 }));
		fit.observe(box.current);
		// Drawn at most once a frame: values that stream in by the
		// thousand a second must not keep the page (and its STOP) busy.
		let frame = 0;
		const draw = () => { frame = 0; u.setData(toNow(data)); };
		const off = conn.session.on("hal/value", (p) => {
			if (p.device !== s.device) return;
			const x = s.field ? p.value && p.value[s.field] : p.value;
			const t = Date.parse(p.ts);
			if (x === undefined || (data[0].length && t < data[0][data[0].length - 1])) return;
			data[0].push(t);
			data[1].push(Number(x));
			if (data[0].length > kept) { data[0].shift(); data[1].shift(); }
			frame = frame || requestAnimationFrame(draw);
		});
		const move = setInterval(() => u.setData(toNow(data)), 10000); // the time axis follows now
		return () => { off(); cancelAnimationFrame(frame); clearInterval(move); fit.disconnect(); u.destroy(); };
	}, [conn, s]);
	return html`<figure class="plot" data-test="plot" data-series=${s.key}>
		<figcaption>${s.key}</figcaption>
		<div ref=${box}></div>
	</figure>`;
}

// toNow draws the last value on to now: the device holds it still (a
// value is sent only when it changes).
function toNow([t, v]) {
	if (t.length === 0) return [t, v];
	return [[...t, Math.max(Date.now(), t[t.length - 1])], [...v, v[v.length - 1]]];
}

// options sets uPlot up for times in milliseconds, the page's colours,
// and steps for a boolean.
function options(s, width) {
	const css = getComputedStyle(document.documentElement);
	const fg = css.getPropertyValue("--muted").trim();
	const line = css.getPropertyValue("--accent").trim();
	const grid = { stroke: css.getPropertyValue("--line").trim() };
	const steps = s.kind === "boolean";
	return {
		width, height: 160, ms: 1, legend: { show: false },
		scales: { x: { time: true }, y: steps ? { range: [-0.1, 1.1] } : {} },
		axes: [{ stroke: fg, grid }, { stroke: fg, grid, ...(steps ? { splits: () => [0, 1], values: (_, v) => v.map((x) => (x ? "on" : "off")) } : {}) }],
		series: [{}, { label: s.key, stroke: line, width: 1.5, ...(steps ? { paths: uPlot.paths.stepped({ align: 1 }) } : {}) }],
	};
}

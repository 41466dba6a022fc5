// Time ticks for the plots' x-axes: at round times of the browser's
// local clock (every 10 s, 5 min, 1 h, a day...), as many as fit, each
// labelled for the span shown ("14:05:30", "14:05", "6 Dec"), and the
// date where a day begins. uPlot's own ticks label a span of a second
// after a restart ":28.200 :28.400"; these never go below a second.

const second = 1000, minute = 60 * second, hour = 60 * minute, day = 24 * hour;

// steps are the round steps between two ticks, smallest first.
const steps = [second, 2 * second, 5 * second, 10 * second, 15 * second, 30 * second,
	minute, 2 * minute, 5 * minute, 10 * minute, 15 * minute, 30 * minute,
	hour, 2 * hour, 3 * hour, 6 * hour, 12 * hour, day, 2 * day, 7 * day, 14 * day, 28 * day];

// minSpan is the least time an axis spans: a plot with a few points a
// second apart (a gateway just restarted) reads in seconds, not in ms.
export const minSpan = minute;

// timeStep is the smallest round step that puts at most most ticks on
// span milliseconds.
export function timeStep(span, most) {
	const n = Math.max(1, most);
	return steps.find((s) => span / s <= n) || steps[steps.length - 1];
}

// offsetAt is the local time's offset from UTC at t, in milliseconds.
function offsetAt(t) {
	return -new Date(t).getTimezoneOffset() * minute;
}

// timeSplits are the times in [min, max] that are whole multiples of
// step in local time (local midnights for a step of a day or more).
export function timeSplits(min, max, step) {
	const off = offsetAt(min);
	const out = [];
	for (let t = Math.ceil((min + off) / step) * step - off; t <= max; t += step) out.push(t);
	return out;
}

const pad = (n) => String(n).padStart(2, "0");

// dateOf is a short local date, "6 Dec".
function dateOf(d) {
	return d.getDate() + " " + d.toLocaleString("en", { month: "short" });
}

// timeLabels labels ticks step apart: "HH:MM:SS" under a minute,
// "HH:MM" under a day, else the date; a tick on another day than the one
// before it (not the first) is labelled with its date too.
export function timeLabels(ticks, step) {
	return ticks.map((t, i) => {
		const d = new Date(t);
		if (step >= day) return dateOf(d);
		let s = pad(d.getHours()) + ":" + pad(d.getMinutes());
		if (step < minute) s += ":" + pad(d.getSeconds());
		if (i > 0 && new Date(ticks[i - 1]).toDateString() !== d.toDateString()) s = dateOf(d) + " " + s;
		return s;
	});
}

// timeRange widens a span shorter than minSpan back from its end, so
// that the newest value stays at the right edge.
export function timeRange(min, max) {
	if (min === null || max === null) return [min, max];
	return [Math.min(min, max - minSpan), max];
}

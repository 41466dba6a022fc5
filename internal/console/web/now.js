// useNow re-renders its component every second while it is shown and
// returns the time, for countdowns.
import { useEffect, useState } from "./vendor/htm/standalone.module.js";

export function useNow(ms = 1000) {
	const [now, setNow] = useState(Date.now());
	useEffect(() => {
		const t = setInterval(() => setNow(Date.now()), ms);
		return () => clearInterval(t);
	}, [ms]);
	return now;
}

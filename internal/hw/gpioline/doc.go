// Package gpioline holds the board's GPIO devices, gpio.output and gpio.input,
// over periph's gpio.PinOut and gpio.PinIn. It takes pins, not line names:
// the board finds the lines (periph.io/x/host/v3/gpioioctl) and tests hand
// in gpiotest pins. Callers that also import periph's gpio (for Pull and
// Edge) give one of the two an alias.
//
// # Outputs
//
// An Output drives its initial value when it is made and then whatever is
// written. It never reads its line back (see Output).
//
// # Inputs
//
// An Input's value is the level of its line, a bool, after Invert. Run
// publishes the level once when it starts, then waits for the edges the
// kernel reports and publishes every change of the settled level:
//
//   - Edge is what the line is requested with, so it selects which
//     transitions wake the Input; it does not filter values. Whatever an
//     edge wakes it to, the Input reads the line and publishes the level
//     if it differs from the last one published, so the value is always a
//     level the line really had, and falls as well as rises. With
//     RisingEdge or FallingEdge the other transition wakes nothing: the
//     value catches up at the next reported edge only (hal/read reads the
//     line afresh meanwhile). BothEdges, the default (the zero Edge, NoEdge,
//     means it), keeps the value in step with the line.
//   - Debounce d: every reported edge (re)starts a timer of d on the
//     clock; when d passes without another edge the line is read once and
//     the level published if it changed. A burst of bounces publishes at
//     most one value, d after its last edge; a pulse shorter than d (both
//     of its edges reported) publishes nothing. With d = 0 the line is read
//     right after each edge.
//   - The timestamp is the time of that read: periph's WaitForEdge gives
//     back neither the kernel's timestamp nor the edge's direction.
//
// Run waits with WaitForEdge in its own goroutine: no polling of levels.
// Each wait is bounded (a minute) rather than WaitForEdge(-1), because
// gpioioctl (host v3.8.5) turns -1 into a deadline in the past and returns
// false at once, which would spin; a quiet input therefore wakes once a
// minute, and no more. When ctx ends, Run calls the pin's Halt, which cuts
// a gpioioctl wait short; a Halt that lands before the wait has set its
// deadline is lost there, so Run repeats it every 50 ms until it returns.
// (gpiotest's Halt does nothing: tests shorten the bound.)
//
// periph's Read returns a level and no error (gpioioctl logs a failed
// ioctl and says Low), so the failure an Input can see is a wait that
// fails: WaitForEdge returning false well before its timeout while ctx is
// live. The Input then reports fault, waits a second on its clock,
// requests the line again with In (periph's advice for a line that has
// gone wrong) and reads it, and reports ok again at the first wait that
// works (an edge or a quiet timeout).
package gpioline

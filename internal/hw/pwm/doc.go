// Package pwm holds the board's pwm devices (openhal-0.1 §6): the value is
// the duty cycle, a number from 0 to 100 in %, and the frequency is
// configuration, fixed when the device is made.
//
// # Hardware
//
// Hardware drives a kernel PWM channel through sysfs
// (/sys/class/pwm/pwmchipN/pwmM). The chip number is not stable across
// kernels: find it with profile.FindByController. NewHardware exports the
// channel, waits (bounded, with growing sleeps) for the kernel to create
// pwmM/ and for udev to open it to the gateway's group, writes period and
// duty_cycle in the order the kernel accepts, and enables it. Every error
// names the device, the chip, the channel and the attribute file.
//
// # Software
//
// Software toggles a plain GPIO line (periph's gpio.PinOut) from a
// goroutine, for lines with no PWM block: periph's PinOut.PWM is not
// implemented by gpioioctl (host v3.8.5), which is what the board's lines
// are. Each edge waits on a time.Timer for a deadline computed from the
// waveform's start, so the frequency is right on average however late the
// edges are, and each edge is late by what the Go runtime's timers allow.
//
// Those timers wait in epoll_wait, whose timeout is in whole milliseconds
// (runtime/netpoll_epoll.go), so an edge fires up to about a millisecond
// after its deadline whatever the frequency. Measured with
//
//	go test -run TestSoftwareJitter -v ./hw/pwm/
//
// (50 % duty, one second per frequency, a pin that only timestamps each
// Out) on the development machine (2 vCPU AMD EPYC VM, Linux 6.18, Go
// 1.26), which is no Raspberry Pi: measure there before relying on them.
//
//	frequency  frequency error  duty error   edge lateness p50 / p99 / max   periods skipped
//	  50 Hz       -0.10 %       -0.8 points   586 µs / 1.06 ms / 1.09 ms          0
//	 100 Hz       -0.04 %       -0.9 points   559 µs / 1.11 ms / 3.10 ms          0
//	 500 Hz       -0.04 %       +0.6 points   532 µs / 1.07 ms / 2.68 ms          0
//	1000 Hz       -0.30 %       -0.4 points   537 µs / 1.07 ms / 2.59 ms          3
//
// On a busy machine the driver may not run for a whole period; it then
// skips it (a missed pulse, never a burst of short ones to catch up), so
// the pulses made fall short by the periods skipped while the deadlines
// stay on their schedule: a 70 ms stall at 50 Hz, seen on a loaded CI
// runner, skips 4 periods. The figures below are measured by make bench
// (PWM_PERF=1 go test -run TestSoftwareJitter -v ./hw/pwm).
//
// Frequency and duty cycle are right on average at every frequency, but a
// single pulse is off by up to a millisecond: 11 % of the period at
// 100 Hz, half the period at 500 Hz, and at 1 kHz whole periods start to
// be skipped. Software PWM therefore refuses frequencies above
// MaxSoftwareHz, 100 Hz, and suits loads that average (a heater, a fan, a
// slow LED dimmer), not servos, whose 1–2 ms pulses need the hardware
// channels.
package pwm

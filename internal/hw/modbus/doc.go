// Package modbus speaks the Modbus application protocol as a client
// (master): requests and replies (PDUs), exception replies, RTU framing
// with its CRC over a serial port, TCP framing (MBAP) over one
// connection, a Client with one method per function, and the codec that
// turns registers into numbers and back (types, word and byte orders).
//
// It is the gateway's own, not a general library: what its bus
// scheduler (internal/hw/modbusline) needs, every call bounded by a
// context (its timeout, the gateway's shutdown), and nothing running
// while idle (no goroutine, no read, no timer between requests).
//
// The layers:
//
//   - Transport carries one request PDU to a unit and brings its reply
//     PDU back: RTU (NewRTU, OpenRTU) or TCP (DialTCP). The errors it
//     returns say what a caller should do: an *Exception is the unit's
//     answer; ErrTimeout, ErrCRC and ErrBadReply are a failed exchange on
//     a working link (retry, then report the unit in fault); ErrRequest is
//     a request that was never sent; anything else is the link itself
//     failing (IsLinkError: close the transport and open it again).
//   - Client builds the requests of functions 1-6, 15 and 16, checks
//     their replies, and wraps every error with what was being done
//     ("read holding 100+2 of unit 3: exception 2: illegal data address").
//   - Decode and Encode convert between registers and float64 values.
//
// Stability: internal to the gateway, free to change. The wire formats
// (RTU, MBAP, the function encodings) follow the Modbus Application
// Protocol V1.1b3 and Modbus over Serial Line V1.02 and will not.
//
// The fake: package modbustest is an in-memory slave with RTU and TCP
// framing, and an in-memory serial Port to run an RTU against it.
package modbus

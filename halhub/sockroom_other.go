//go:build !linux

package halhub

// sockRoom is Linux's (SIOCOUTQ): elsewhere the WebSocket reader never
// writes itself.
type sockRoom struct{}

func newSockRoom(*guardedConn) *sockRoom { return nil }

func (*sockRoom) fits(int) bool { return false }

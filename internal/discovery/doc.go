// Package discovery puts the gateway's Hub on the LAN and finds the
// gateways there: DNS-SD over multicast DNS, one service per kind of
// listener (`_openhal._tcp` for the TCP one, `_openhal-ws._tcp` for the
// WebSocket), with a TXT record that says what a client needs before it
// connects (protocol, conformance level, gateway id, TLS and the
// certificate's fingerprint, the WebSocket path, the console and /mcp).
//
// Announcing: Services builds the services from the listeners the gateway
// opened; a Publisher (NewPublisher) puts them on the network and
// withdraws them: through avahi-daemon's D-Bus API when it runs (Raspberry
// Pi OS: avahi owns port 5353), else through a responder of our own. Fake
// stands in for either in tests.
//
// Finding: Find, List and Watch browse for those services and turn what
// they hear into Gateways with their URLs, so that a client reaches a
// gateway by its name.
package discovery

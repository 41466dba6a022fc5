package cli

import "strings"

// approveFlags are the flags of the `gateway confirm approve ID` line
// that `gateway mcp` hands an agent for a person to run: they reach the
// gateway this command reached, with an admin token, as written, whatever
// that command's own defaults would choose. fp is the certificate the
// connection trusted ("" without TLS).
//
//   - a gateway found by name on the LAN: --hub NAME, with the
//     fingerprint trusted (nameFlag);
//   - a hub given by --hub or $GATEWAY_HUB: --hub URL, even the default
//     URL (the approver's command would otherwise choose the gateway of
//     its default state directory), with --fingerprint over TLS;
//   - a hub taken from the state directory: nothing more than that;
//   - and --state-dir DIR when one was given, where the approver's
//     admin.token is, and which names the gateway running there.
//
// Nothing at all when nothing was given: the approver's command makes
// the same choice.
func (f *clientFlags) approveFlags(fp string) string {
	var parts []string
	switch {
	case f.hubName != "":
		parts = append(parts, "--hub", f.nameFlag(fp))
	case f.hubOfStateDir:
	case f.hubGiven:
		parts = append(parts, "--hub", shellWord(f.hub))
		if fp != "" && (strings.HasPrefix(f.hub, "wss://") || strings.HasPrefix(f.hub, "tls://")) {
			parts = append(parts, "--fingerprint", fp)
		}
	}
	if f.stateDirGiven {
		parts = append(parts, "--state-dir", shellWord(f.stateDir))
	}
	return strings.Join(parts, " ")
}

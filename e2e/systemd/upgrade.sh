# The upgrade scenario of run.sh, sourced by it once the container is up
# and every check before it has run (or alone, SYSTEMD_TEST_ONLY=upgrade):
# build A (the older version) installed, a token added, the configuration
# edited, the service started; then build B (DEB) installed over it. The
# configuration (a conffile) and the tokens must stay, the running service
# must be restarted exactly once, and the old token must still work.

ct dpkg -i /harness/gateway_old_amd64.deb >/dev/null 2>&1 || say "dpkg -i of the older build failed"
put_test_config ""
ct sh -c 'echo "# edited by the operator before the upgrade" >>/etc/gateway/gateway.yaml'
ct systemctl start gateway.service
agent=$(ct runuser -u gateway -- /usr/bin/gateway token add --state-dir /var/lib/gateway \
	--name upgrader --kind agent --scope read 2>/dev/null | tail -n1)
conf0=$(ct sha256sum /etc/gateway/gateway.yaml)
tokens0=$(ct sha256sum /var/lib/gateway/tokens.json)
inv0=$(prop gateway.service InvocationID)
main0=$(prop gateway.service MainPID)
restarts0=$(prop gateway.service NRestarts)
detail=
cli read sim.led --token "$agent" >/dev/null 2>&1 || detail="before the upgrade the agent token does not work ($agent);"

c=$(cursor)
out=$(ct dpkg -i /harness/gateway_amd64.deb 2>&1)
rc=$?
[ $rc = 0 ] || detail="$detail dpkg -i of the new build exit $rc: $out;"
printf '%s\n' "$out" | grep -q "over ($old_version)" || detail="$detail dpkg did not unpack over $old_version: $out;"
v=$(ct dpkg-query -W -f='${Version}' gateway)
[ "$v" = "$new_version" ] || detail="$detail installed version $v, want $new_version;"
[ "$(ct sha256sum /etc/gateway/gateway.yaml)" = "$conf0" ] || detail="$detail the configuration changed;"
[ "$(ct sha256sum /var/lib/gateway/tokens.json)" = "$tokens0" ] || detail="$detail tokens.json changed;"
wait_for 10 is_active || detail="$detail ActiveState=$(prop gateway.service ActiveState) after the upgrade;"
inv1=$(prop gateway.service InvocationID)
main1=$(prop gateway.service MainPID)
[ "$inv1" != "$inv0" ] || detail="$detail the service was not restarted (InvocationID $inv0 kept);"
[ "$main1" != "$main0" ] || detail="$detail the main pid $main0 did not change;"
[ "$(prop gateway.service NRestarts)" = "$restarts0" ] || detail="$detail NRestarts $restarts0 -> $(prop gateway.service NRestarts): it crashed;"
starts=$(journal_since "$c" | grep -c 'gateway.service: Changed start -> running')
[ "$starts" = 1 ] || detail="$detail started $starts times during the upgrade, want once;"
wait_for 5 cli read sim.led --token "$agent" || detail="$detail the old token does not work after the upgrade;"
has_devices '"sim\.led"' || detail="$detail the edited configuration (board sim) is not the one in use;"
check "upgrade $old_version -> $new_version: configuration and tokens kept, restarted once ($starts start), old token works" \
	"$([ -z "$detail" ] && echo 0 || echo 1)" "$detail"

ct dpkg -P gateway >/dev/null 2>&1

# Upgrade from a configuration that serves plain HTTP and TCP on every
# address, as the package shipped before issue 28, edited by the operator
# (so dpkg keeps it as it is). An older version ran it; here the older
# build is this binary, which refuses that file, so the run before the
# upgrade gets the same listeners from a drop-in's flags (with
# --insecure, as an older version needed nothing) and the file is put
# back as the older version had it once the gateway runs. The new
# package's postinst must say why the file is refused and leave the
# running gateway alone; a start then refuses the file naming
# insecure: true, and the file changed as docs/install.md says starts.
ct dpkg -i /harness/gateway_old_amd64.deb >/dev/null 2>&1 || say "dpkg -i of the older build failed"
put_test_config ""
ct sh -c 'cat >/etc/systemd/system/gateway.service.d/50-old.conf' <<'EOF'
[Service]
ExecStart=
ExecStart=/usr/bin/gateway run --config /etc/gateway/gateway.yaml --state-dir /var/lib/gateway --unix /run/gateway/hal.sock --http 0.0.0.0:7750 --tcp 0.0.0.0:7751 --insecure
EOF
ct systemctl daemon-reload
ct systemctl start gateway.service
ct rm -f /etc/systemd/system/gateway.service.d/50-old.conf
ct systemctl daemon-reload
ct sed -i 's|^    http: 127.0.0.1:7750|    http: 0.0.0.0:7750|; s|^    tcp: 127.0.0.1:7751|    tcp: 0.0.0.0:7751|' /etc/gateway/gateway.yaml
detail=
wait_for 5 cli devices || detail="the older setup does not answer;"
main0=$(prop gateway.service MainPID)
inv0=$(prop gateway.service InvocationID)
out=$(ct dpkg -i /harness/gateway_amd64.deb 2>&1)
rc=$?
[ $rc = 0 ] || detail="$detail dpkg -i exit $rc: $out;"
for w in "this version refuses /etc/gateway/gateway.yaml" "hub.listen.http: 0.0.0.0:7750 is off loopback" \
	"insecure: true" "the running gateway was NOT restarted"; do
	printf '%s\n' "$out" | grep -qF "$w" || detail="$detail dpkg's output does not say '$w': $out;"
done
[ "$(prop gateway.service InvocationID)" = "$inv0" ] && [ "$(prop gateway.service MainPID)" = "$main0" ] ||
	detail="$detail the gateway was restarted;"
is_active || detail="$detail ActiveState=$(prop gateway.service ActiveState) after the upgrade;"
c=$(cursor)
ct systemctl restart gateway.service
refused() { journal_since "$c" | grep -q 'gateway\[[0-9]*\]: gateway: /etc/gateway/gateway.yaml: hub.listen.http: 0.0.0.0:7750 is off loopback.*insecure: true'; }
wait_for 10 refused || detail="$detail a start with the old file does not refuse it naming insecure: true;"
ct systemctl stop gateway.service
ct sed -i 's|^    http: 0.0.0.0:7750|    http: 127.0.0.1:7750|; s|^    tcp: 0.0.0.0:7751|    tcp: 127.0.0.1:7751|' /etc/gateway/gateway.yaml
ct systemctl reset-failed gateway.service 2>/dev/null
ct systemctl start gateway.service
wait_for 10 is_active || detail="$detail the changed file does not start: ActiveState=$(prop gateway.service ActiveState);"
check "upgrade with a kept file of plain listeners on 0.0.0.0: dpkg says why, the running gateway is left; a start refuses it naming insecure: true" \
	"$([ -z "$detail" ] && echo 0 || echo 1)" "$detail"

ct dpkg -P gateway >/dev/null 2>&1

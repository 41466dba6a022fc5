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

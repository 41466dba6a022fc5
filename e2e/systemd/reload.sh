# The reload scenario of run.sh (issue 32 point 6), sourced by it once the
# container is up (or alone, SYSTEMD_TEST_ONLY=reload): the package
# installed, the sim board started with a client watching, then
# `systemctl reload gateway` twice: once with a new safety rule, which is
# in force at once, and once with a bad file, which is refused with the
# words of `gateway check` while the rule of the good file stays. The
# service stays active with the same main process, the client stays
# connected, and systemd hears RELOADING=1 and READY=1 around each
# reload with the outcome in its status. The package is purged at the
# end, for the scenarios after it.

ct dpkg -i /harness/gateway_amd64.deb >/dev/null 2>&1 || say "dpkg -i failed"
put_test_config ""
ct systemctl reset-failed gateway.service 2>/dev/null
ct systemctl start gateway.service
detail=
wait_for 5 cli devices || detail="the gateway does not answer;"
main0=$(prop gateway.service MainPID)
restarts0=$(prop gateway.service NRestarts)
# A client connected across both reloads: `gateway watch`, as root (it
# reads admin.token), until it is killed below.
watchpid=$(ct sh -c '/usr/bin/gateway watch >/run/reload-watch.log 2>&1 & echo $!')
watching() { ct grep -q 'connected to' /run/reload-watch.log; }
wait_for 5 watching || detail="$detail gateway watch did not connect;"
cli write sim.fan 60 >/dev/null 2>&1 || detail="$detail sim.fan 60 refused before the reload;"

# A good file: a maximum for sim.fan.
ct sh -c 'printf "devices:\n  sim.fan:\n    rules: {maximum: 50}\n" >>/etc/gateway/gateway.yaml'
c=$(cursor)
out=$(ct systemctl reload gateway.service 2>&1) || detail="$detail systemctl reload exit $?: $out;"
reloaded() { journal_since "$c" | grep -q 'gateway\[[0-9]*\]: .*msg="configuration reloaded" part=reload rules=sim.fan'; }
wait_for 10 reloaded || detail="$detail no 'configuration reloaded ... rules=sim.fan' in the journal;"
settled() { [ "$(prop gateway.service ActiveState)" = active ] && prop gateway.service StatusText | grep -q 'reloaded at'; }
wait_for 10 settled || detail="$detail after the reload: ActiveState=$(prop gateway.service ActiveState), STATUS=$(prop gateway.service StatusText);"
j=$(journal_since "$c")
printf '%s\n' "$j" | grep -q 'gateway.service: Got notification message.*RELOADING=1' || detail="$detail systemd got no RELOADING=1;"
printf '%s\n' "$j" | grep -q 'gateway.service: Got notification message.*READY=1' || detail="$detail systemd got no READY=1 after the reload;"
out=$(cli write sim.fan 60 2>&1) && detail="$detail sim.fan 60 accepted after the reload gave it a maximum of 50;"
printf '%s' "$out" | grep -q maximum || detail="$detail the refused write does not name the maximum: $out;"
cli write sim.fan 40 >/dev/null 2>&1 || detail="$detail sim.fan 40 refused;"
[ "$(prop gateway.service MainPID)" = "$main0" ] || detail="$detail the main pid changed ($main0 -> $(prop gateway.service MainPID));"
[ "$(prop gateway.service NRestarts)" = "$restarts0" ] || detail="$detail NRestarts $restarts0 -> $(prop gateway.service NRestarts);"
check "systemctl reload: a new rule in force at once, RELOADING=1 then READY=1, active, the same process ($(prop gateway.service StatusText | sed 's/.*, reloaded/reloaded/'))" \
	"$([ -z "$detail" ] && echo 0 || echo 1)" "$detail"

# A bad file: refused with check's line; the rule of the good file stays.
ct sh -c 'printf "hub:\n  listen:\n    htp: 127.0.0.1:1\n" >>/etc/gateway/gateway.yaml'
want=$(ct /usr/bin/gateway check --config /etc/gateway/gateway.yaml 2>&1)
c=$(cursor)
detail=
out=$(ct systemctl reload gateway.service 2>&1) || detail="systemctl reload exit $?: $out;"
refused() { journal_since "$c" | grep -q 'msg="reload refused; the running configuration stays"'; }
wait_for 10 refused || detail="$detail no 'reload refused' in the journal;"
journal_since "$c" | grep -qF "msg=\"reload refused\" part=reload error=\"$want\"" ||
	detail="$detail the journal does not refuse with check's line '$want';"
settled() { [ "$(prop gateway.service ActiveState)" = active ] && prop gateway.service StatusText | grep -q 'reload refused at'; }
wait_for 10 settled || detail="$detail after the refused reload: ActiveState=$(prop gateway.service ActiveState), STATUS=$(prop gateway.service StatusText);"
cli write sim.fan 60 >/dev/null 2>&1 && detail="$detail the rule of the running configuration was lost;"
cli write sim.fan 30 >/dev/null 2>&1 || detail="$detail sim.fan 30 refused after the refused reload;"
[ "$(prop gateway.service MainPID)" = "$main0" ] || detail="$detail the main pid changed;"
ct sh -c "kill -0 $watchpid" 2>/dev/null || detail="$detail gateway watch ended: $(ct tail -n 3 /run/reload-watch.log);"
ct grep -q 'sim\.fan = 30' /run/reload-watch.log || detail="$detail the watch did not see sim.fan = 30 after both reloads;"
ct grep -qE 'reconnected|hub restarted' /run/reload-watch.log && detail="$detail the watch lost its connection: $(ct grep -E 'reconnected|hub restarted' /run/reload-watch.log | head -n 2);"
check "systemctl reload of a bad file: refused with check's words, the running rules stay, the unit active, the watch still connected" \
	"$([ -z "$detail" ] && echo 0 || echo 1)" "$detail"
ct sh -c "kill $watchpid" 2>/dev/null
ct systemctl stop gateway.service
ct dpkg -P gateway >/dev/null 2>&1 || say "dpkg -P failed"
ct rm -rf /etc/systemd/system/gateway.service.d
ct systemctl daemon-reload

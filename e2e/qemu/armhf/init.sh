#!/bin/busybox sh
# /init of the armhf test guest (vexpress-a15, Debian's armmp kernel).
#
# 1. Loads the modules listed in /lib/modules/order (dependencies first):
#    i2c-versatile (the board's I2C controller at 0x1c160000, where QEMU's
#    tmp105 model sits), i2c-dev (/dev/i2c-N), smsc911x (the board's
#    LAN9118 network card), lm75 (the kernel's hwmon driver of the
#    TMP105) and dps310 (the kernel's IIO driver of that barometer),
#    which the test binds to models tmp2 and baro through new_device.
# 2. Finds the /dev/i2c-N of the 1c160000 controller and writes it into
#    /etc/gateway/gateway.yaml in place of @I2C_BUS@.
# 3. Brings up eth0 as 10.0.2.15/24 via 10.0.2.2 (QEMU's user network).
# 4. Starts the command channel: TCP port 2323, where each connection gets
#    a fresh /bin/sh (busybox nc -e). The test reaches it through a hostfwd
#    port; anything written is run, and what it prints comes back.
# 5. Runs /gateway run --config /etc/gateway/gateway.yaml (both appended by
#    the test as a second cpio), its output on the console.
# Progress lines start with "guest:", so the test can wait for them.
/bin/busybox mkdir -p /usr/bin /usr/sbin
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /run /tmp
for m in $(cat /lib/modules/order); do
	insmod "/lib/modules/$m" || echo "guest: insmod $m failed"
done

# wait_for runs "$@" every 0.1 s until it succeeds, for up to 10 s.
wait_for() {
	i=0
	while [ $i -lt 100 ]; do
		"$@" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

find_bus() {
	for d in /sys/class/i2c-dev/i2c-*; do
		[ -e "$d" ] || continue
		case $(readlink -f "$d") in
		*1c160000*) bus=/dev/${d##*/}; [ -c "$bus" ] && return 0 ;;
		esac
	done
	return 1
}
bus=""
if wait_for find_bus; then
	echo "guest: i2c $bus"
else
	echo "guest: no /dev/i2c-N under 1c160000"
	ls -l /sys/class/i2c-dev/ 2>&1
fi
if [ -f /etc/gateway/gateway.yaml ]; then
	sed -i "s|@I2C_BUS@|$bus|g" /etc/gateway/gateway.yaml
fi

ifconfig lo 127.0.0.1 up
if wait_for ip link show eth0 >/dev/null 2>&1; then
	ifconfig eth0 10.0.2.15 netmask 255.255.255.0 up
	route add default gw 10.0.2.2
	echo "guest: net eth0 10.0.2.15"
else
	echo "guest: no eth0"
fi

(while :; do nc -l -p 2323 -e /bin/sh; done) </dev/null >/dev/null 2>&1 &
echo "guest: shell on 2323"

if [ -x /gateway ]; then
	(
		/gateway run --config /etc/gateway/gateway.yaml --state-dir /var/lib/gateway
		echo "guest: gateway exited $?"
	) &
	echo "guest: gateway started"
fi
while :; do sleep 3600; done

package armhf_test

import (
	"context"
	"path/filepath"

	"github.com/openhal/gateway/e2e/qemu/qemutest"
)

// The guest ports init.sh listens on: the gateway's HAL (TCP) and the
// command channel (busybox nc -l -p 2323 -e /bin/sh, in a loop).
const (
	guestHALPort = 7751
	guestCmdPort = 2323
)

// assets are the files e2e/qemu/armhf/assets.sh builds.
type assets struct{ dir string }

func (a assets) path(name string) string { return filepath.Join(a.dir, name) }

// bootGuest starts qemu-system-arm vexpress-a15 with tmp105 models at
// 0x48 (id tmp0), 0x49 (id tmp1) and 0x4c (id tmp2, for the kernel's
// lm75 driver), and a DPS310 barometer at 0x77 (id baro, for the
// kernel's dps310 IIO driver), on the board's I2C bus, and its
// LAN9118 forwarded from the host, booting the base initramfs followed by
// files (/gateway and /etc/gateway/gateway.yaml). QMP is at qmpPath.
func bootGuest(ctx context.Context, a assets, files []qemutest.File, tmp, qmpPath string) (*qemutest.Guest, error) {
	initrd := filepath.Join(tmp, "initrd")
	if err := qemutest.WriteInitrd(a.path("base.cpio.gz"), initrd, files); err != nil {
		return nil, err
	}
	return qemutest.Start(ctx, qemutest.Config{
		QEMU: "qemu-system-arm",
		Args: []string{
			"-M", "vexpress-a15", "-cpu", "cortex-a15", "-smp", "2", "-m", "512",
			"-accel", "tcg,thread=multi", "-nographic", "-no-reboot", "-audiodev", "none,id=noaudio", "-global", "pl041.audiodev=noaudio",
			"-kernel", a.path("vmlinuz"), "-dtb", a.path("vexpress-v2p-ca15-tc1.dtb"),
			"-initrd", initrd, "-append", "console=ttyAMA0 panic=-1 quiet",
			"-device", "tmp105,id=tmp0,bus=i2c,address=0x48",
			"-device", "tmp105,id=tmp1,bus=i2c,address=0x49",
			"-device", "tmp105,id=tmp2,bus=i2c,address=0x4c",
			"-device", "dps310,id=baro,bus=i2c,address=0x77",
			"-qmp", "unix:" + qmpPath + ",server=on,wait=off",
		},
		NICModel:    "lan9118",
		Forward:     []int{guestHALPort, guestCmdPort},
		CommandPort: guestCmdPort,
	})
}

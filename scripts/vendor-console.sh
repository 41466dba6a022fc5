#!/usr/bin/env bash
# Re-fetches the console's vendored npm files and checks them against
# internal/console/web/vendor/vendor.json, the manifest that names each package,
# its version, licence, tarball integrity (sha512, as `npm view
# <pkg>@<version> dist` gives it) and the files taken from it with their
# sha256.
#
#   scripts/vendor-console.sh          check: fetch each tarball with
#                                      `npm pack`, verify its sha512 against
#                                      the manifest, and compare every listed
#                                      file with the committed copy
#   scripts/vendor-console.sh --write  the same, then copy the files into
#                                      internal/console/web/vendor/ and record their
#                                      sha256 in the manifest (after editing
#                                      a version and its integrity there)
#
# Needs npm and node (npm's own runtime) and the npm registry. No bundler:
# the files are used as the packages ship them. Prints one line per file
# and "N passed, N failed"; exits 1 on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

vendor=internal/console/web/vendor
manifest=$vendor/vendor.json
write=false
case "${1:-}" in
"") ;;
--write) write=true ;;
*)
	echo "usage: $0 [--write]" >&2
	exit 2
	;;
esac

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Lines of "name version integrity" and "file name from to sha256" from the
# manifest.
node -e '
const m = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
for (const p of m.packages) {
  console.log(["pkg", p.name, p.version, p.integrity].join(" "));
  for (const f of p.files) console.log(["file", p.name, f.from, f.to, f.sha256 || "-"].join(" "));
}' "$manifest" >"$tmp/list"

hash() { # algorithm file → base64 (sha512, as npm writes it) or hex (sha256)
	node -e '
const c = require("crypto").createHash(process.argv[1]);
c.update(require("fs").readFileSync(process.argv[2]));
console.log(process.argv[1] === "sha512" ? c.digest("base64") : c.digest("hex"));' "$1" "$2"
}

passed=0
failed=0
pass() { echo "PASS $*"; passed=$((passed + 1)); }
fail() { echo "FAIL $*"; failed=$((failed + 1)); }

while read -r kind name a b c; do
	[ "$kind" = pkg ] || continue
	version=$a integrity=$b
	mkdir -p "$tmp/$name"
	tgz=$(cd "$tmp/$name" && npm pack --silent "$name@$version" </dev/null)
	got="sha512-$(hash sha512 "$tmp/$name/$tgz")"
	if [ "$got" = "$integrity" ]; then
		pass "$name@$version tarball integrity"
	else
		fail "$name@$version tarball integrity: manifest $integrity, fetched $got"
		continue
	fi
	tar -xzf "$tmp/$name/$tgz" -C "$tmp/$name"
done <"$tmp/list"

while read -r kind name from to sum; do
	[ "$kind" = file ] || continue
	src=$tmp/$name/package/$from
	if [ ! -f "$src" ]; then
		fail "$to: $name has no $from"
		continue
	fi
	if $write; then
		mkdir -p "$(dirname "$vendor/$to")"
		cp "$src" "$vendor/$to"
		node -e '
const fs = require("fs"), [path, to, sum] = process.argv.slice(1);
const m = JSON.parse(fs.readFileSync(path, "utf8"));
for (const p of m.packages) for (const f of p.files) if (f.to === to) f.sha256 = sum;
fs.writeFileSync(path, JSON.stringify(m, null, 2) + "\n");' "$manifest" "$to" "$(hash sha256 "$src")"
		pass "$to written from $name/$from"
	elif ! cmp -s "$src" "$vendor/$to"; then
		fail "$to differs from $name's $from (run with --write to take the fetched one)"
	elif [ "$sum" != "$(hash sha256 "$src")" ]; then
		fail "$to: sha256 in $manifest is $sum, the file's is $(hash sha256 "$src")"
	else
		pass "$to is $name's $from"
	fi
done <"$tmp/list"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

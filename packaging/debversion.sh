#!/bin/sh
# debversion.sh: prints the Debian version of the checkout it runs in, one
# that dpkg sorts in the order the builds were made, so that installing a
# later build is an upgrade and never looks like a downgrade:
#
#   at a tag vX.Y.Z, clean              X.Y.Z
#   after the tag vX.Y.Z                X.Y.Z+gitYYYYMMDD.HHMMSS.HASH
#   before any tag                      0.1.0~gitYYYYMMDD.HHMMSS.HASH
#
# YYYYMMDD.HHMMSS is the commit's date in UTC (builds of one day sort by
# time); HASH is the short commit hash; a tree with uncommitted changes
# adds .dirty. '~' sorts before anything, so 0.1.0~git... is below the
# first release 0.1.0; '+' sorts after the end, so X.Y.Z+git... is above
# its tag and below the next one. Without git (a source tarball): 0.1.0~0.
set -eu

first=0.1.0 # the version before any tag

git rev-parse --git-dir >/dev/null 2>&1 || { echo "$first~0"; exit 0; }
dirty=
git diff --quiet HEAD -- 2>/dev/null || dirty=.dirty
stamp=$(TZ=UTC0 git log -1 --format=%cd --date=format-local:%Y%m%d.%H%M%S HEAD)
hash=$(git rev-parse --short=7 HEAD)
if [ -z "$dirty" ] && tag=$(git describe --tags --exact-match --match 'v[0-9]*' 2>/dev/null); then
	v=${tag#v}
elif last=$(git describe --tags --abbrev=0 --match 'v[0-9]*' 2>/dev/null); then
	v=${last#v}+git$stamp.$hash$dirty
else
	v=$first~git$stamp.$hash$dirty
fi
# Debian versions allow [A-Za-z0-9.+~]; a tag's '-' or '_' would split off a
# Debian revision.
printf '%s\n' "$v" | tr -- '-_' '..' | tr -cd 'A-Za-z0-9.+~'
echo

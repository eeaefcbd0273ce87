#!/usr/bin/env bash
# library-sync.sh: refresh the embedded sample inventory (assets/operator) from a copy of
# the openshift/library repository.
#
# Source layout read (what openshift/library publishes for the samples operator):
#
#   <library>/operator/<arch-dir>/official/<group>/{imagestreams,templates}/*.json
#   <library>/operator/<arch-dir>/community/<group>/{imagestreams,templates}/*.json
#
# with <arch-dir> one of ocp-x86_64 ocp-aarch64 ocp-ppc64le ocp-s390x okd-x86_64.
# Destination layout (what pkg/inventory loads):
#
#   <dest>/<arch-dir>/<group>/{imagestreams,templates}/*.json
#
# Rules:
#   - OCP directories take official/ only. Without --ocp-all only the groups listed in
#     OCP_SUPPORTED_SAMPLES are synced; other groups already in <dest> are left exactly as
#     they are (neither updated nor removed), and library groups outside the list are skipped.
#   - okd-x86_64 takes official/ and community/ together; a file present in both is an error.
#   - A synced group ends up holding exactly the library's *.json files: new files are
#     added, changed files updated, files gone from the library removed. Other files in the
#     library (README.md, index.json, ...) are never copied.
#   - Files are only written when their content differs, so a second run changes nothing
#     and says so.
#
# Afterwards, check the result with:
#   go run ./cmd/cluster-samples-operator inventory --inventory-dir <dest> --arch <arch> list
set -euo pipefail
export LC_ALL=C

# Groups synced for OCP without --ocp-all: the groups the upstream operator supports plus
# the database, jenkins and example-application groups this operator ships.
OCP_SUPPORTED_SAMPLES="ruby python nodejs perl php httpd nginx eap java webserver dotnet golang rails
mariadb mysql postgresql redis jenkins django cakephp dancer"
OCP_ARCH_DIRS="ocp-x86_64 ocp-aarch64 ocp-ppc64le ocp-s390x"
OKD_ARCH_DIRS="okd-x86_64"
LIBRARY_URL="${LIBRARY_URL:-https://github.com/openshift/library/archive/refs/heads/master.tar.gz}"

usage() {
	cat <<EOF
Usage: $(basename "$0") [--ocp] [--okd] [--ocp-all] [--from DIR|FILE.zip|FILE.tar.gz] [--dest DIR]

Refresh the sample inventory from openshift/library.

  --ocp          sync the OCP directories (${OCP_ARCH_DIRS}); the default
  --okd          sync the OKD directory (${OKD_ARCH_DIRS}); may be combined with --ocp
  --ocp-all      sync every OCP group of the library, not only the supported ones (implies --ocp)
  --from SRC     read the library from a checkout or an extracted archive (DIR), or from a
                 .zip or .tar.gz archive, instead of downloading
                 \$LIBRARY_URL (default ${LIBRARY_URL})
  --dest DIR     directory to update (default: assets/operator next to this script)
  -h, --help     show this help

Supported OCP groups (without --ocp-all):
  ${OCP_SUPPORTED_SAMPLES//$'\n'/ }
EOF
}

die() {
	echo "library-sync: $*" >&2
	exit 1
}

ocp=false okd=false ocp_all=false from="" dest=""
while [[ $# -gt 0 ]]; do
	case "$1" in
	--ocp) ocp=true ;;
	--okd) okd=true ;;
	--ocp-all) ocp=true ocp_all=true ;;
	--from | --dest)
		[[ $# -ge 2 && -n "$2" ]] || die "$1 needs a value"
		if [[ "$1" == --from ]]; then from="$2"; else dest="$2"; fi
		shift
		;;
	--from=* | --dest=*)
		[[ -n "${1#*=}" ]] || die "${1%%=*} needs a value"
		if [[ "$1" == --from=* ]]; then from="${1#*=}"; else dest="${1#*=}"; fi
		;;
	-h | --help)
		usage
		exit 0
		;;
	*)
		usage >&2
		echo >&2
		die "unknown argument: $1"
		;;
	esac
	shift
done
if ! $ocp && ! $okd; then
	ocp=true
fi
if [[ -z "$dest" ]]; then
	dest="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/assets/operator"
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/library-sync.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# find_root DIR: print the library root (the directory holding operator/) within DIR.
find_root() {
	local d="$1" sub
	if [[ -d "$d/operator" ]]; then
		echo "$d"
		return
	fi
	# An extracted archive has one top-level directory (library-master/).
	local subs=()
	for sub in "$d"/*/; do
		[[ -d "$sub" ]] && subs+=("${sub%/}")
	done
	if [[ ${#subs[@]} -eq 1 && -d "${subs[0]}/operator" ]]; then
		echo "${subs[0]}"
		return
	fi
	die "no operator/ directory in $1 (expected the openshift/library layout operator/<arch-dir>/official/...)"
}

extract() {
	local archive="$1" out="$work/src"
	mkdir -p "$out"
	case "$archive" in
	*.zip)
		command -v unzip >/dev/null || die "unzip is needed to read $archive"
		unzip -q "$archive" -d "$out" || die "cannot extract $archive"
		;;
	*.tar.gz | *.tgz)
		tar -xzf "$archive" -C "$out" || die "cannot extract $archive"
		;;
	*) die "unsupported archive $archive: use a directory, a .zip or a .tar.gz" ;;
	esac
	find_root "$out"
}

if [[ -z "$from" ]]; then
	command -v curl >/dev/null || die "curl is needed to download $LIBRARY_URL (or use --from)"
	echo "downloading $LIBRARY_URL"
	curl -fsSL --retry 3 -o "$work/library.tar.gz" "$LIBRARY_URL" || die "download of $LIBRARY_URL failed"
	lib="$(extract "$work/library.tar.gz")"
elif [[ -d "$from" ]]; then
	lib="$(find_root "$from")"
elif [[ -f "$from" ]]; then
	lib="$(extract "$from")"
else
	die "--from $from: no such file or directory"
fi

in_list() { # in_list WORD "SPACE-SEPARATED LIST"
	local w="$1" x
	# shellcheck disable=SC2086 # the list is split on purpose
	for x in $2; do [[ "$x" == "$w" ]] && return 0; done
	return 1
}

added=0 updated=0 removed=0

# stage ARCH_DIR LAYERS FILTER: copy the library's sample files of one arch directory
# into $work/staged/ARCH_DIR/<group>/<kind>/, honouring the group filter.
stage() {
	local arch="$1" layers="$2" filter="$3" layer gdir group kind f name target
	local skipped=()
	local src="$lib/operator/$arch"
	[[ -d "$src" ]] || die "the library has no operator/$arch directory"
	mkdir -p "$work/staged/$arch"
	for layer in $layers; do
		[[ -d "$src/$layer" ]] || continue
		for gdir in "$src/$layer"/*/; do
			[[ -d "$gdir" ]] || continue
			group="$(basename "$gdir")"
			if [[ "$filter" == supported ]] && ! in_list "$group" "$OCP_SUPPORTED_SAMPLES"; then
				skipped+=("$group")
				continue
			fi
			for kind in imagestreams templates; do
				for f in "$gdir$kind"/*.json; do
					[[ -f "$f" ]] || continue
					name="$(basename "$f")"
					target="$work/staged/$arch/$group/$kind/$name"
					[[ -e "$target" ]] && die "$arch: $group/$kind/$name exists in more than one of: $layers"
					mkdir -p "$(dirname "$target")"
					cp "$f" "$target"
				done
			done
		done
	done
	if [[ ${#skipped[@]} -gt 0 ]]; then
		local list
		list="$(printf '%s\n' "${skipped[@]}" | sort -u | tr '\n' ' ')"
		echo "$arch: skipped groups not in OCP_SUPPORTED_SAMPLES (use --ocp-all): ${list% }"
	fi
	if [[ -z "$(find "$work/staged/$arch" -type f -print -quit)" ]]; then
		die "$arch: no sample files found under $src; refusing to empty $dest/$arch"
	fi
}

# apply ARCH_DIR GROUPS: make each group of dest/ARCH_DIR match the staged copy.
apply() {
	local arch="$1" groups="$2" group kind f name have want
	for group in $groups; do
		for kind in imagestreams templates; do
			have="$dest/$arch/$group/$kind"
			want="$work/staged/$arch/$group/$kind"
			for f in "$want"/*.json; do
				[[ -f "$f" ]] || continue
				name="$(basename "$f")"
				if [[ ! -e "$have/$name" ]]; then
					mkdir -p "$have"
					cp "$f" "$have/$name"
					echo "added    $arch/$group/$kind/$name"
					added=$((added + 1))
				elif ! cmp -s "$f" "$have/$name"; then
					cp "$f" "$have/$name"
					echo "updated  $arch/$group/$kind/$name"
					updated=$((updated + 1))
				fi
			done
			for f in "$have"/*.json; do
				[[ -f "$f" || -L "$f" ]] || continue
				name="$(basename "$f")"
				if [[ ! -e "$want/$name" ]]; then
					rm -f "$f"
					echo "removed  $arch/$group/$kind/$name"
					removed=$((removed + 1))
				fi
			done
			rmdir "$have" 2>/dev/null || true # only if now empty
		done
		rmdir "$dest/$arch/$group" 2>/dev/null || true
	done
}

# groups_of DIR...: print the group directory names found in the given directories.
groups_of() {
	local d g
	for d in "$@"; do
		[[ -d "$d" ]] || continue
		for g in "$d"/*/; do
			[[ -d "$g" ]] && basename "$g"
		done
	done | sort -u | tr '\n' ' '
}

sync_arch() {
	local arch="$1" layers="$2" filter="$3" groups
	stage "$arch" "$layers" "$filter"
	if [[ "$filter" == supported ]]; then
		groups="$OCP_SUPPORTED_SAMPLES"
	else
		groups="$(groups_of "$work/staged/$arch" "$dest/$arch")"
	fi
	mkdir -p "$dest/$arch"
	apply "$arch" "$groups"
}

mkdir -p "$dest"
if $ocp; then
	filter=supported
	$ocp_all && filter=all
	for arch in $OCP_ARCH_DIRS; do
		sync_arch "$arch" "official" "$filter"
	done
fi
if $okd; then
	for arch in $OKD_ARCH_DIRS; do
		sync_arch "$arch" "official community" all
	done
fi

if [[ $((added + updated + removed)) -eq 0 ]]; then
	echo "no changes: $dest is up to date"
else
	echo "$added added, $updated updated, $removed removed in $dest"
fi

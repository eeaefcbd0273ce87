#!/usr/bin/env bash
# library-sync.sh: make the embedded sample inventory (assets/operator) exactly openshift/library's
# content at one commit, and record that commit and a checksum of every file in assets/library.lock.
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
#   - All five arch-dirs are synced every time, so that the lock file describes one commit.
#   - OCP arch-dirs take official/; okd-x86_64 takes official/ and community/ together (a file present
#     in both is an error). Every group the library publishes is taken: the library's operator/ tree is
#     already the samples operator's selection, and a group left out would be left behind on a cluster
#     that moves from the upstream operator to this one.
#   - Afterwards each arch-dir holds exactly the library's *.json sample files: new files are added,
#     changed files updated, files (and groups) the library does not have removed. The files are copied
#     byte for byte; other files of the library (README.md, index.json, ...) are never copied.
#   - Files are only written when their content differs, so a second run changes nothing and says so.
#
# Afterwards: make bundle (relatedImages follow the inventory), then make verify test.
set -euo pipefail
export LC_ALL=C

ARCH_DIRS="ocp-x86_64 ocp-aarch64 ocp-ppc64le ocp-s390x okd-x86_64"
LIBRARY_REPO="github.com/openshift/library"
LIBRARY_ARCHIVE_BASE="${LIBRARY_ARCHIVE_BASE:-https://${LIBRARY_REPO}/archive}"

usage() {
	cat <<EOF
Usage: $(basename "$0") [--from SRC] [--commit REV] [--date DATE] [--dest DIR] [--lock FILE]

Make assets/operator exactly openshift/library's content at one commit and record it in
assets/library.lock (the commit, its date and a sha256 of every file), which make verify checks.

  --from SRC     where to read the library:
                   a git repository (a clone, or a bare mirror): the files of --commit
                   (default: the commit in the lock file);
                   a directory holding operator/ (a checkout or an extracted archive), or a
                   .tar.gz or .zip archive of one: --commit must then say which commit it is.
                 Without --from the archive of --commit (default: the locked one) is downloaded
                 from ${LIBRARY_REPO}.
  --commit REV   the library commit to sync (a full or abbreviated hash, or a ref of a git SRC);
                 the lock records the full hash, so an abbreviated one must be resolvable: by a
                 git SRC, by the commit an archive made by git archive (GitHub's) records, by
                 a top directory named library-<hash>, or by the lock file's commit
  --date DATE    the commit's date, for a SRC that is not a git repository (default: unknown)
  --dest DIR     the inventory to update (default: assets/operator next to this script)
  --lock FILE    the lock file to write (default: assets/library.lock next to this script)
  -h, --help     show this help

To move to a newer library: $(basename "$0") --from <clone> --commit <hash>; make bundle; make verify test.
EOF
}

die() {
	echo "library-sync: $*" >&2
	exit 1
}

from="" commit="" date="" dest="" lock=""
while [[ $# -gt 0 ]]; do
	case "$1" in
	--from | --dest | --commit | --date | --lock)
		[[ $# -ge 2 && -n "$2" ]] || die "$1 needs a value"
		printf -v "${1#--}" '%s' "$2"
		shift
		;;
	--from=* | --dest=* | --commit=* | --date=* | --lock=*)
		opt="${1%%=*}"
		[[ -n "${1#*=}" ]] || die "$opt needs a value"
		printf -v "${opt#--}" '%s' "${1#*=}"
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
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[[ -n "$dest" ]] || dest="$here/assets/operator"
[[ -n "$lock" ]] || lock="$here/assets/library.lock"
command -v sha256sum >/dev/null || die "sha256sum is needed"

work="$(mktemp -d "${TMPDIR:-/tmp}/library-sync.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# locked_commit: the commit recorded in the lock file, if any.
locked_commit() {
	if [[ -f "$lock" ]]; then
		awk '$1 == "commit" { print $2; exit }' "$lock"
	fi
}

# find_root DIR: print the library root (the directory holding operator/) within DIR.
find_root() {
	local d="$1" sub
	if [[ -d "$d/operator" ]]; then
		echo "$d"
		return
	fi
	# An extracted archive has one top-level directory (library-<commit>/).
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
	*) die "unsupported archive $archive: use a git repository, a directory, a .zip or a .tar.gz" ;;
	esac
	find_root "$out"
}

# archive_commit: the commit git archive (and so GitHub) records in the archive SRC, if any.
archive_commit() {
	[[ -f "$from" ]] || return 0
	case "$from" in
	*.tar.gz | *.tgz)
		if command -v git >/dev/null; then
			gzip -dc "$from" 2>/dev/null | git get-tar-commit-id 2>/dev/null || true
		fi
		;;
	*.zip)
		if command -v unzip >/dev/null; then
			unzip -zq "$from" 2>/dev/null || true
		fi
		;;
	esac
}

# full_commit ABBREV: the full hash that ABBREV abbreviates, for a SRC that is not a git
# repository, from what names one: the archive, the library root's directory (library-<hash>,
# as GitHub's archives name it), the lock file. Empty when none of them extends ABBREV.
full_commit() {
	local c
	for c in "$(archive_commit)" "$(basename "$lib")" "$(locked_commit)"; do
		c="${c#library-}"
		if [[ "$c" =~ ^[0-9a-f]{40}$ && "$c" == "$1"* ]]; then
			echo "$c"
			return
		fi
	done
}

is_git_repo() {
	git -C "$1" rev-parse --git-dir >/dev/null 2>&1 && [[ "$(git -C "$1" rev-parse --is-inside-work-tree 2>/dev/null)" != true || -e "$1/.git" ]]
}

if [[ -z "$from" ]]; then
	[[ -n "$commit" ]] || commit="$(locked_commit)"
	[[ "$commit" =~ ^[0-9a-f]{40}$ ]] || die "without --from, --commit must be a full 40-hex commit (or the lock file must hold one)"
	command -v curl >/dev/null || die "curl is needed to download the library (or use --from)"
	url="${LIBRARY_ARCHIVE_BASE}/${commit}.tar.gz"
	echo "downloading $url"
	curl -fsSL --retry 3 -o "$work/library.tar.gz" "$url" || die "download of $url failed"
	lib="$(extract "$work/library.tar.gz")"
elif [[ -d "$from" ]] && command -v git >/dev/null && is_git_repo "$from"; then
	rev="${commit:-$(locked_commit)}"
	rev="${rev:-HEAD}"
	commit="$(git -C "$from" rev-parse --verify --quiet "${rev}^{commit}")" || die "$from has no commit $rev"
	[[ -n "$date" ]] || date="$(TZ=UTC git -C "$from" log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ "$commit")"
	mkdir -p "$work/src"
	git -C "$from" archive --format=tar "$commit" operator | tar -x -C "$work/src" || die "cannot read operator/ at $commit in $from"
	lib="$work/src"
elif [[ -d "$from" ]]; then
	lib="$(find_root "$from")"
elif [[ -f "$from" ]]; then
	lib="$(extract "$from")"
else
	die "--from $from: no such file or directory"
fi
[[ "$commit" =~ ^[0-9a-f]{7,40}$ ]] || die "say which library commit $from holds with --commit (a hash): the lock file records it"
if [[ ${#commit} -lt 40 ]]; then
	full="$(full_commit "$commit")"
	[[ -n "$full" ]] || die "--commit $commit is abbreviated and nothing in $from says the full hash (no commit recorded in the archive, no top directory library-<hash>, not the lock file's commit): give all 40 hex digits, or --from a git repository"
	commit="$full"
fi
[[ -n "$date" ]] || date=unknown

added=0 updated=0 removed=0

# stage ARCH_DIR LAYERS: copy the library's sample files of one arch-dir into
# $work/staged/ARCH_DIR/<group>/<kind>/, and record where each came from in $work/origin.
# Few processes per file: forks, not copies, are what a sync of a few hundred files costs. A
# layer's files keep their paths below it (<group>/<kind>/<name>), so one tar copies them all.
stage() {
	local arch="$1" layers="$2" layer gdir group kind f name target files
	local src="$lib/operator/$arch"
	[[ -d "$src" ]] || die "the library has no operator/$arch directory"
	mkdir -p "$work/staged/$arch"
	for layer in $layers; do
		[[ -d "$src/$layer" ]] || continue
		files=()
		for gdir in "$src/$layer"/*/; do
			[[ -d "$gdir" ]] || continue
			group="${gdir%/}"
			group="${group##*/}"
			for kind in imagestreams templates; do
				for f in "$gdir$kind"/*.json; do
					[[ -f "$f" ]] || continue
					name="${f##*/}"
					[[ "$name$group" != *[[:space:]]* ]] || die "$arch: '$group/$kind/$name' has white space in its name"
					target="$work/staged/$arch/$group/$kind/$name"
					[[ -e "$target" ]] && die "$arch: $group/$kind/$name exists in more than one of: $layers"
					files+=("./$group/$kind/$name")
					printf '%s %s\n' "$arch/$group/$kind/$name" "operator/$arch/$layer/$group/$kind/$name" >>"$work/origin"
				done
			done
		done
		if [[ ${#files[@]} -gt 0 ]]; then
			copy_tree "$src/$layer" "$work/staged/$arch" "${files[@]}"
		fi
	done
	if [[ -z "$(find "$work/staged/$arch" -type f -print -quit)" ]]; then
		die "$arch: no sample files found under $src; refusing to empty $dest/$arch"
	fi
}

# copy_tree FROM TO PATH...: copy the files at PATHs below FROM to the same paths below TO,
# making the directories they need. One tar for all: a mkdir and a cp for each file or directory
# were 1,300 of the 2,900 programs the script's tests started, and most of the 8.7 s a first
# sync of the whole inventory (376 files) took. Like cp, the copies get the time of the sync,
# the owner running it and its umask; unlike cp, a file is replaced, never written through a
# link.
copy_tree() {
	local from="$1" to="$2"
	shift 2
	tar -C "$from" -cf - "$@" | tar -C "$to" -xmf - --no-same-owner --no-same-permissions
}

# sums DIR: print "sha256 path" for every file below DIR, paths relative to DIR.
sums() {
	(cd "$1" && find . \( -type f -o -type l \) -print0 | xargs -0 -r sha256sum | sed 's|  \./| |')
}

# apply ARCH_DIR: make dest/ARCH_DIR hold exactly the staged files.
apply() {
	local arch="$1" rel sum
	local -A want=() have=()
	local copy=()
	while read -r sum rel; do want[$rel]=$sum; done < <(sums "$work/staged/$arch")
	while read -r sum rel; do have[$rel]=$sum; done < <(sums "$dest/$arch")
	for rel in $(printf '%s\n' "${!want[@]}" | sort); do
		if [[ -z "${have[$rel]:-}" ]]; then
			copy+=("./$rel")
			echo "added    $arch/$rel"
			added=$((added + 1))
		elif [[ "${have[$rel]}" != "${want[$rel]}" ]]; then
			copy+=("./$rel")
			echo "updated  $arch/$rel"
			updated=$((updated + 1))
		fi
	done
	if [[ ${#copy[@]} -gt 0 ]]; then
		copy_tree "$work/staged/$arch" "$dest/$arch" "${copy[@]}"
	fi
	for rel in $(printf '%s\n' "${!have[@]}" | sort); do
		if [[ -z "${want[$rel]:-}" ]]; then
			rm -f "$dest/$arch/$rel"
			echo "removed  $arch/$rel"
			removed=$((removed + 1))
		fi
	done
	find "$dest/$arch" -mindepth 1 -type d -empty -delete
	sums "$work/staged/$arch" | sed "s| | $arch/|" >>"$work/sums"
}

for arch in $ARCH_DIRS; do
	layers=official
	[[ "$arch" == okd-* ]] && layers="official community"
	stage "$arch" "$layers"
done
mkdir -p "$dest"
for arch in $ARCH_DIRS; do
	mkdir -p "$dest/$arch"
	apply "$arch"
done
for d in "$dest"/*/; do
	[[ -d "$d" ]] || continue
	case " $ARCH_DIRS " in
	*" $(basename "$d") "*) ;;
	*) die "$dest holds $(basename "$d"), which is not an arch-dir of the library ($ARCH_DIRS); remove it" ;;
	esac
done

{
	echo "# The openshift/library content of assets/operator, written by library-sync.sh: do not edit."
	echo "# make verify fails when a file below assets/operator differs from its checksum here, or is"
	echo "# missing, or is not listed. Refresh with library-sync.sh (see README.md, \"The inventory\")."
	echo "library $LIBRARY_REPO"
	echo "commit $commit"
	echo "date $date"
	echo "# sha256 file-in-assets/operator file-in-the-library"
	join -1 2 -2 1 <(sort -k 2 "$work/sums") <(sort "$work/origin") | awk '{ print "file", $2, $1, $3 }'
} >"$work/lock"
if [[ -f "$lock" ]] && cmp -s "$work/lock" "$lock"; then
	lock_changed=false
else
	cp "$work/lock" "$lock"
	lock_changed=true
fi

if [[ $((added + updated + removed)) -eq 0 ]]; then
	echo "no changes: $dest is openshift/library at $commit"
else
	echo "$added added, $updated updated, $removed removed in $dest (openshift/library at $commit)"
fi
$lock_changed && echo "wrote $lock"
exit 0

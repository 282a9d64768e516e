# Configuration tests of the cluster suite (sourced by run-tests): each runs
# `slurmd -G` on a throw-away configuration of one node and checks what the
# plugin says about it.
# shellcheck shell=bash

# slurmd_G NAME GRES_LINE GRES_CONF_TEXT DEVICES...: a throw-away config dir
# for node n1 with the plugin ($RUN/conf-NAME), its devices (paths relative
# to its dev/; "file" entries become 240:100+ nodes) and an inventory listing
# them as Ascend 910B; runs `slurmd -G -N n1` (prints the GRES configuration
# through the plugin's node_config_load, logs on stderr, exits).  Sets G_RC
# and G_OUT.
slurmd_G() {
	local name=$1 gres=$2 gresconf=$3
	shift 3
	local dir=$RUN/conf-$name i=0 f inv=()
	rm -rf "$dir"
	# spool/n1: slurmd keeps its sockets and hwloc cache in SlurmdSpoolDir
	# (spool/%n); since 24.11 slurmd -G too.
	mkdir -p "$dir/etc" "$dir/dev" "$dir/log" "$dir/run" "$dir/state" "$dir/spool/n1"
	for f in "$@"; do
		make_device "$dir/dev/$f" "240:$((100 + i))"
		inv+=("ascend-910b $dir/dev/$f $i")
		i=$((i + 1))
	done
	write_slurm_conf "$dir/etc" 0 "$(node_line n1 "$gres")"
	printf '%s\n' "${gresconf//@DEV@/$dir/dev}" >"$dir/etc/gres.conf"
	write_vgpu_conf "$dir/etc" "$CATALOG_DIR" "$dir/etc/inventory-%n.json"
	write_inventory "$dir/etc/inventory-n1.json" "${inv[@]}"
	slurmd_G_again "$name"
}

# slurmd_G_again NAME: runs `slurmd -G -N n1` again on $RUN/conf-NAME (after
# a test changed a file there).  Sets G_RC and G_OUT.
slurmd_G_again() {
	local dir=$RUN/conf-$1
	set +e
	G_OUT=$(SLURM_CONF=$dir/etc/slurm.conf timeout 30 "$SLURM_SBIN/slurmd" -G -N n1 2>&1)
	G_RC=$?
	set -e
	printf '%s\n' "$G_OUT" >"$dir/slurmd-G.out"
}

# expect_no_vgpu_records: the last slurmd -G printed no vgpu record at all.
expect_no_vgpu_records() {
	! grep -q 'Gres Name=vgpu' <<<"$G_OUT" ||
		fail "slurmd -G still printed vgpu records: $(grep 'Gres Name=vgpu' <<<"$G_OUT" | head -2 | tr '\n' ';')"
}

# expect_G_message TEXT...: slurmd -G exited normally (status 0: -G always
# exits 0 unless something fatal()s or crashes) and printed a line that holds
# every TEXT and says gres/vgpu.
expect_G_message() {
	local t lines
	[ "$G_RC" = 0 ] || fail "slurmd -G did not exit normally (status $G_RC$([ "$G_RC" -ge 124 ] && echo ': timeout or signal')): $(tail -3 <<<"$G_OUT" | tr '\n' ' ')"
	lines=$(grep -E '(^|: )gres/vgpu' <<<"$G_OUT" || true)
	for t in "$@"; do
		lines=$(grep -F -- "$t" <<<"$lines" || true)
	done
	[ -n "$lines" ] || fail "slurmd -G (status $G_RC) printed no gres/vgpu line containing '$*'; its output: $(grep -iE 'vgpu|error|fatal' <<<"$G_OUT" | head -5 | tr '\n' ' ')"
}

devs() { local i; for ((i = 0; i < $1; i++)); do echo "davinci$i"; done; }

# Control for the bad_conf tests: the good n1 configuration loads through
# the plugin without an error, which turns the one gres.conf line into one
# record of $S shares per device (and drops Slurm's file-less remainder).
t_good_conf() {
	local n
	# shellcheck disable=SC2046
	slurmd_G good vgpu:ascend:800 "NodeName=n1 Name=vgpu Type=ascend File=@DEV@/davinci[0-7]" $(devs 8)
	[ "$G_RC" = 0 ] || fail "slurmd -G exited $G_RC: $(tail -3 <<<"$G_OUT" | tr '\n' ' ')"
	! grep -Ei 'error|fatal' <<<"$G_OUT" >/dev/null ||
		fail "slurmd -G on a good config: $(grep -Ei 'error|fatal' <<<"$G_OUT" | head -3 | tr '\n' ' ')"
	n=$(grep -c "Gres Name=vgpu Type=ascend Count=$S " <<<"$G_OUT" || true)
	if [ "$n" != 8 ] || [ "$(grep -c 'Gres Name=vgpu' <<<"$G_OUT")" != 8 ]; then
		fail "slurmd -G: expected 8 vgpu records of Count=$S, got: $(grep 'Gres Name=vgpu' <<<"$G_OUT" | sed 's/ ID=.*//' | tr '\n' ';')"
	fi
}

t_bad_conf_over1024() {
	# shellcheck disable=SC2046
	slurmd_G over1024 vgpu:ascend:1100 "NodeName=n1 Name=vgpu Type=ascend File=@DEV@/davinci[0-10]" $(devs 11)
	expect_G_message 1024 SharesPerDevice
}

t_bad_conf_total_mismatch() {
	# shellcheck disable=SC2046
	slurmd_G total_mismatch vgpu:ascend:700 "NodeName=n1 Name=vgpu Type=ascend File=@DEV@/davinci[0-7]" $(devs 8)
	expect_G_message Gres=vgpu:ascend:800
}

# davinci7 is named in gres.conf but not created.  Slurm 22.05's gres.conf
# parser stat()s every File= in slurmd itself (gres.c _my_stat: waits 20 s,
# then "fatal: can't stat gres.conf file ...") before any plugin's
# node_config_load runs, so the plugin's own "does not exist" check cannot
# be reached this way; either message is accepted, and slurmd must end
# without a signal.
t_bad_conf_missing_file() {
	local missing
	# shellcheck disable=SC2046
	slurmd_G missing_file vgpu:ascend:800 "NodeName=n1 Name=vgpu Type=ascend File=@DEV@/davinci[0-7]" $(devs 7)
	missing=$RUN/conf-missing_file/dev/davinci7
	if grep -q "can't stat gres.conf file $missing" <<<"$G_OUT"; then
		[ "$G_RC" -lt 124 ] || fail "slurmd -G did not exit normally (status $G_RC)"
		log "bad_conf_missing_file: Slurm's parser rejected $missing before the plugin (status $G_RC)"
		return 0
	fi
	expect_G_message "does not exist"
}

t_bad_conf_unknown_type() {
	# shellcheck disable=SC2046
	slurmd_G unknown_type vgpu:foo:800 "NodeName=n1 Name=vgpu Type=foo File=@DEV@/davinci[0-7]" $(devs 8)
	expect_G_message "not in the chip catalog"
}

# A vgpu.conf the plugin cannot trust (S unreadable) and a corrupt simulated
# inventory fail closed: the error names the file, and the node reports no
# vgpu records at all (so slurmctld would drain it) instead of guessing.
t_bad_conf_vgpu_conf() {
	# shellcheck disable=SC2046
	slurmd_G vgpu_conf vgpu:ascend:800 "NodeName=n1 Name=vgpu Type=ascend File=@DEV@/davinci[0-7]" $(devs 8)
	local conf=$RUN/conf-vgpu_conf/etc/vgpu.conf
	echo "SharesPerDevice=lots" >>"$conf"
	slurmd_G_again vgpu_conf
	expect_G_message "vgpu.conf:$(wc -l <"$conf")" "SharesPerDevice=lots" "reports no vgpu"
	expect_no_vgpu_records
}

t_bad_conf_inventory() {
	# shellcheck disable=SC2046
	slurmd_G inventory vgpu:ascend:800 "NodeName=n1 Name=vgpu Type=ascend File=@DEV@/davinci[0-7]" $(devs 8)
	echo '{"devices": [' >"$RUN/conf-inventory/etc/inventory-n1.json"
	slurmd_G_again inventory
	expect_G_message "inventory-n1.json" "reports no vgpu"
	expect_no_vgpu_records
}

# A device named twice would be shared twice: on one File= line, or on two
# lines. The type is refused, naming the lines.
t_bad_conf_device_twice() {
	slurmd_G twice vgpu:ascend:200 "NodeName=n1 Name=vgpu Type=ascend File=@DEV@/davinci0,@DEV@/davinci0" davinci0
	expect_G_message "davinci0 is named 2 times" "line 1" "remove the repeats"
	expect_no_vgpu_records
	slurmd_G twolines vgpu:ascend:200 "NodeName=n1 Name=vgpu Type=ascend File=@DEV@/davinci[0-0]
NodeName=n1 Name=vgpu Type=ascend File=@DEV@/davinci[0-0]" davinci0
	expect_G_message "davinci0 is named 2 times" "line 1" "line 2"
	expect_no_vgpu_records
}

# Without Inventory= (nothing discovered here), the catalog's device file
# names still tell nvidia files from DCU ones.
t_bad_conf_wrong_vendor_file() {
	slurmd_G vendor vgpu:dcu:200 "NodeName=n1 Name=vgpu Type=dcu File=@DEV@/nvidia[0-1]" nvidia0 nvidia1
	write_vgpu_conf "$RUN/conf-vendor/etc" "$CATALOG_DIR" ""
	slurmd_G_again vendor
	expect_G_message "nvidia0 is the device file of nvidia devices" "not Type=dcu" "line 1"
	expect_no_vgpu_records
}

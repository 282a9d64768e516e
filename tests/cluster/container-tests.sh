# shellcheck shell=bash
# Slurm's own containers: sbatch/srun --container=BUNDLE with oci.conf and
# runc. The bundle is a user's image without libvgpu.so; oci.conf names
# vgpu-oci-runtime in front of runc, which makes the container load
# libvgpu.so from the host and see the node's run directory
# (src/prolog/oci_bundle.h).

# make_bundle DIR UID: a rootless runc bundle owned by UID whose rootfs has
# sh, env, sed, the CUDA probe and the stub driver, and no libvgpu.so.
make_bundle() {
	local dir=$1 uid=$2 f
	rm -rf "$dir"
	mkdir -p "$dir/rootfs/bin" "$dir/rootfs/stubs" "$dir/rootfs/proc" "$dir/rootfs/dev" "$dir/rootfs/sys" "$dir/rootfs/tmp"
	cp /bin/sh /usr/bin/env /bin/sed "$LAB/bin/cuda_probe" "$dir/rootfs/bin/"
	cp "$LAB/stubs/libcuda.so.1" "$dir/rootfs/stubs/"
	for f in $(ldd /bin/sh /usr/bin/env /bin/sed "$LAB/bin/cuda_probe" | grep -o '/[^ :]*\.so[^ :]*' | sort -u); do
		mkdir -p "$dir/rootfs$(dirname "$f")"
		cp -L "$f" "$dir/rootfs$f"
	done
	# A root job's bundle runs rootful (no user namespace); libvgpu.so trusts
	# no file in a user namespace that maps the host's root.
	if [ "$uid" = 0 ]; then
		(cd "$dir" && runc spec)
		return
	fi
	(cd "$dir" && runc spec --rootless)
	python3 - "$dir/config.json" "$uid" <<-'PY'
	import json, sys
	path, uid = sys.argv[1], int(sys.argv[2])
	c = json.load(open(path))
	for k in ("uidMappings", "gidMappings"):
	    for m in c["linux"][k]:
	        m["hostID"] = uid
	json.dump(c, open(path, "w"), indent=1)
	PY
	chown -R "$uid:$uid" "$dir"
}

# write_oci_conf RUNTIME WRAPPER UID: oci.conf for RUNTIME (runc, crun),
# rootless unless UID is 0, RunTimeRun through WRAPPER ("" for the runtime
# alone).
write_oci_conf() {
	local rt=$1 root="--rootless=true --root=$RUN/$1-%u"
	[ "$3" != 0 ] || root="--root=$RUN/$1-%u"
	cat >"$LAB/etc/oci.conf" <<-EOF
	RunTimeQuery="$rt $root state %n.%u.%j.%s.%t"
	RunTimeKill="$rt $root kill -a %n.%u.%j.%s.%t"
	RunTimeDelete="$rt $root delete --force %n.%u.%j.%s.%t"
	RunTimeRun="${2:+$2 }$rt $root run -b %b %n.%u.%j.%s.%t"
	EOF
	chmod 644 "$LAB/etc/oci.conf"
}

# probe_lines ID: the probe's lines of job ID's output, on one line (22.05's
# slurmstepd adds a line of its own there: "_try_parse: JSON parsing error",
# runc's state output).
probe_lines() { grep -E '^(PLAIN|CLEAN|init|alloc)' "$RUN/$1.out" | tr '\n' '|'; }

# A 10-share job on n3 (8 GiB of an A100 80G) runs its batch script in a
# container of its own image: through vgpu-oci-runtime it is held to its
# quota (9 GiB refused, 7 GiB allocated), also with a clean environment (the
# bound /etc/ld.so.preload, the job's cgroup shown); through the runtime
# alone, the control, it allocates 9 GiB. As user nobody (rootless runc),
# and on cgroup v2 as root too (rootful runc, its container's cgroup below
# the job's): under cgroup/v1 device fencing runc starts no container for a
# root job at all, with or without the wrapper (doc/enforcement.md).
t_container_held() {
	trap 'rm -f "$LAB/etc/oci.conf"' EXIT
	container_held_as 65534
	[ "$LAB_CGROUP" = v1 ] || container_held_as 0
}

# container_held_as UID: t_container_held for a job of UID.
container_held_as() {
	local uid=$1 bundle=$RUN/bundle-$1 id want="init 0|alloc 2|alloc 0|" rt=${VGPU_TEST_OCI_RUNTIME:-runc}
	make_bundle "$bundle" "$uid"
	# The stub driver shows the job's device: its UUID from the limits file
	# where the container sees the run directory, else n3's first.
	cat >"$bundle/rootfs/bin/probe" <<-EOF
	#!/bin/sh
	limits=$VGPU_RUN/job_\$SLURM_JOB_ID/limits
	uuid=\$(sed -n 's/^device 0 uuid=\\([^ ]*\\) .*/\\1/p' \$limits 2>/dev/null)
	export LD_LIBRARY_PATH=/stubs VGPU_STUB_CUDA_DEVICES=\${uuid:-$(lab_uuid n3 0)},85899345920
	echo PLAIN; /bin/cuda_probe init alloc $((9 * GIB)) alloc $((7 * GIB))
	echo CLEAN; env -i LD_LIBRARY_PATH=/stubs VGPU_STUB_CUDA_DEVICES=\$VGPU_STUB_CUDA_DEVICES /bin/cuda_probe init alloc $((9 * GIB)) alloc $((7 * GIB))
	EOF
	chmod 755 "$bundle/rootfs/bin/probe"
	chown "$uid:$uid" "$bundle/rootfs/bin/probe"
	write_oci_conf "$rt" "$VGPU_SBINDIR/vgpu-oci-runtime" "$uid"
	id=$(submit -w n3 --uid="$uid" --gid="$uid" --gres=vgpu:nvidia:10 --container="$bundle" --wrap /bin/probe)
	wait_job "$id"
	expect "job $id of uid $uid in a container through vgpu-oci-runtime" "$(probe_lines "$id")" "PLAIN|$want""CLEAN|$want"
	wait_clean "$id"
	write_oci_conf "$rt" "" "$uid"
	id=$(submit -w n3 --uid="$uid" --gid="$uid" --gres=vgpu:nvidia:10 --container="$bundle" --wrap /bin/probe)
	wait_job "$id"
	want="init 0|alloc 0|alloc 0|"
	expect "job $id of uid $uid in a container through runc alone (the control)" "$(probe_lines "$id")" "PLAIN|$want""CLEAN|$want"
	wait_clean "$id"
}

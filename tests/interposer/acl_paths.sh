# Sourced by tests/interposer/run: ACL entry points that allocate device
# memory or start device work beyond the plain paths of run itself.

# Work of CANN 8.x beyond the launch forms of t_acl_pacing_holds_a_job_to_its_share:
# model-RI replays (torch_npu's NPUGraph::replay), aclmdlExecute(Async)V2
# and aclopCast are paced as aclmdlExecute(Async) and aclopExecute are.
t_acl_model_ri_and_v2_work_is_paced() {
	local id mode out
	out=$(env LD_PRELOAD= "$ACL_PROBE" init work 0.6 5000 ri | grep ^work)
	[ "$(busy "$out")" -ge 80 ] || fail "the stub runtime without libvgpu kept the device only $(busy "$out") % busy ($out)"
	id=$(acl_job $GIB) || fail "job setup" # 10 shares
	for mode in ri risync modelv2 modelasyncv2 cast; do
		out=$(acl_probe "$id" -- init work 0.6 5000 $mode | grep ^work)
		[ "$(busy "$out")" -ge 3 ] && [ "$(busy "$out")" -le 25 ] ||
			fail "ACL $mode work at 10 shares kept the device $(busy "$out") % busy ($out)"
	done
}

# CANN 8.5's operator library launches each aclnn kernel through the hooked
# aclrtLaunchKernelWithHostArgs, inside the paced stand-in dlsym hands out:
# the launch is not paced a second time. Back-to-back tiny operators were
# what the second pacing throttled far below the share; an operator called
# without dlsym (a program linked against the library) is paced once, by
# the launch hook.
t_aclnn_operators_are_paced_once() {
	local id mode out
	expect "dlsym hands out a stand-in for the host-argument operator too" \
		"$(lines "$(env LD_PRELOAD="$LIB" "$ACL_PROBE" aclnnsym aclnnBusyHost 2>"$WORK/stderr")")" "aclnnsym libvgpu"
	out=$(env LD_PRELOAD= "$ACL_PROBE" init work 0.6 5000 aclnnhost | grep ^work)
	[ "$(busy "$out")" -ge 80 ] || fail "the stub operator library without libvgpu kept the device only $(busy "$out") % busy ($out)"
	id=$(acl_job $GIB) || fail "job setup" # 10 shares
	for mode in aclnn aclnnhost aclnnlinked; do
		out=$(acl_probe "$id" -- init work 0.6 5000 $mode | grep ^work)
		[ "$(busy "$out")" -ge 3 ] && [ "$(busy "$out")" -le 25 ] ||
			fail "$mode operators of 5 ms at 10 shares kept the device $(busy "$out") % busy ($out)"
	done
	export VGPU_STUB_ACL_CLOCK_DIR=$WORK/clock-aclnn
	mkdir -p "$VGPU_STUB_ACL_CLOCK_DIR"
	for mode in aclnn aclnnhost aclnnlinked; do
		id=$(limits_job "3,$GIB,30,100,ascend") || fail "job setup"
		out=$(acl_probe "$id" -- init burstof 1.5 10 64 $mode | grep ^burst)
		[ "$(busy "$out")" -ge 22 ] && [ "$(busy "$out")" -le 36 ] ||
			fail "bursts of 10 us $mode operators at 30 shares kept the device $(busy "$out") % busy ($out)"
	done
}

# aclrtMemRetainAllocationHandle is another reference to the physical
# memory, freed by an aclrtFreePhysical of its own (CANN's VMM reference).
# Before, a job could make, map, retain, free, unmap, and map the retained
# handle again, uncharged.
t_acl_retained_physical_memory_stays_charged() {
	local id m=$((800 * 1048576))
	expect "the stub runtime without libvgpu: a retained handle keeps the memory after free and unmap" \
		"$(lines "$(env LD_PRELOAD= "$ACL_PROBE" init vmap $((6 * GIB)) vretain vrelease vunmap vmap $((6 * GIB)))")" \
		"init 0|vmap 0|vretain 0|vrelease 0|vunmap 0|vmap 207001"
	id=$(acl_job $GIB) || fail "job setup"
	expect "retain, free, unmap, map again: charged until the retained reference is freed and unmapped" \
		"$(lines "$(acl_probe "$id" -- init vmap $m vretain vrelease vunmap alloc $m vremap $m alloc $m vunremap alloc $m)")" \
		"init 0|vmap 0|vretain 0|vrelease 0|vunmap 0|alloc 207001|vremap 0|alloc 207001|vunremap 0|alloc 0"
	expect "both references freed, then unmapped: given back" \
		"$(lines "$(acl_probe "$id" -- init vmap $m vretain vrelease vrelease alloc $m vunmap alloc $m)")" \
		"init 0|vmap 0|vretain 0|vrelease 0|vrelease 0|alloc 207001|vunmap 0|alloc 0"
}

# aclrtFreeWithDevSync frees aclrtMalloc memory as aclrtFree does.
t_acl_free_with_dev_sync_gives_memory_back() {
	local id cmd m=$((800 * 1048576))
	id=$(acl_job $GIB) || fail "job setup"
	for cmd in alloc align32; do
		expect "$cmd, aclrtFreeWithDevSync, $cmd again" \
			"$(lines "$(acl_probe "$id" -- init $cmd $m freesync $cmd $m)")" "init 0|$cmd 0|freesync 0|$cmd 0"
	done
}

# A bundle's models are loaded by the runtime's internal load and no call
# sizes them: refused in a job, passed through outside one.
t_acl_bundles_are_refused_in_a_job() {
	local id mib=1048576
	expect "the stub runtime without libvgpu: a loaded bundle takes device memory" \
		"$(lines "$(env LD_PRELOAD= "$ACL_PROBE" init bload file $((6 * GIB)) $GIB alloc $((2 * GIB)) bunload alloc $((2 * GIB)))")" \
		"init 0|bload 0|alloc 207001|bunload 0|alloc 0"
	expect "outside a job a bundle loads" \
		"$(lines "$(env LD_PRELOAD="$LIB" "$ACL_PROBE" init bload file $mib $mib bunload bload mem $mib $mib bunload 2>"$WORK/stderr")")" \
		"init 0|bload 0|bunload 0|bload 0|bunload 0"
	id=$(acl_job $GIB) || fail "job setup"
	expect "in a job bundles are refused, nothing taken" \
		"$(lines "$(acl_probe "$id" -- init bload file $mib $mib bload mem $mib $mib alloc $GIB)")" \
		"init 0|bload 207001|bload 207001|alloc 0"
	grep -q "libvgpu: a model bundle load is refused in a vgpu job" "$WORK/stderr" ||
		fail "no message on stderr: $(cat "$WORK/stderr")"
}

# ACL_RT_MEM_ATTR_DEVICE_ID must name the current device: CANN 8.5's runtime
# refuses any other (ApiImpl::DevMalloc), so charging the current device is
# right. A regression guard: this held before as well.
t_acl_malloc_config_names_the_current_device() {
	local id cmd m=$((800 * 1048576))
	id=$(acl_job $GIB) || fail "job setup"
	for cmd in cfgdev taskscheddev; do
		expect "$cmd naming the current device: charged there" \
			"$(lines "$(acl_probe "$id" -- init $cmd $m 0 alloc $((300 * 1048576)))")" "init 0|$cmd 0|alloc 207001"
		expect "$cmd naming another device: the runtime refuses, nothing charged" \
			"$(lines "$(acl_probe "$id" -- init $cmd $m 1 alloc $GIB)")" "init 0|$cmd 107000|alloc 0"
	done
}

# A model load takes the memory of every partition aclmdlQueryExeOMDesc
# reports (work, weight, model description, kernels, kernel arguments,
# tasks, FIFO), not only work and weight; a partition the program hands in
# is its own (charged as aclrtMalloc memory). Without an answer from
# aclmdlQueryExeOMDesc, work and weight (aclmdlQuerySize) are charged.
t_acl_model_loads_charge_every_partition() {
	local id how mib=1048576
	expect "the stub runtime without libvgpu: a model's other partitions take device memory too" \
		"$(lines "$(env LD_PRELOAD= "$ACL_PROBE" init mloadx file $((2 * GIB)) $((2 * GIB)) $((3 * GIB)) alloc $((2 * GIB)) munload alloc $((2 * GIB)))")" \
		"init 0|mload 0|alloc 207001|munload 0|alloc 0"
	id=$(acl_job $GIB) || fail "job setup"
	for how in file config; do
		expect "$how: 300 + 300 MiB and 600 MiB of other partitions are refused, nothing taken" \
			"$(lines "$(acl_probe "$id" -- init mloadx $how $((300 * mib)) $((300 * mib)) $((600 * mib)) alloc $((800 * mib)))")" \
			"init 0|mload 207001|alloc 0"
		expect "$how: 200 + 200 + 300 MiB are charged until unloaded" \
			"$(lines "$(acl_probe "$id" -- init mloadx $how $((200 * mib)) $((200 * mib)) $((300 * mib)) alloc $((300 * mib)) alloc $((100 * mib)) munload alloc $((600 * mib)))")" \
			"init 0|mload 0|alloc 0|alloc 207001|munload 0|alloc 0"
	done
	expect "a config handing in the kernel partition (100 MiB from aclrtMalloc): charged once" \
		"$(lines "$(acl_probe "$id" -- init mloadx configkernel $((200 * mib)) $((200 * mib)) $((600 * mib)) alloc $((20 * mib)) alloc $((100 * mib)))")" \
		"init 0|mload 0|alloc 0|alloc 207001"
	expect "a runtime that cannot report the partitions: work and weight are charged" \
		"$(lines "$(export VGPU_STUB_ACL_NO_EXEOM_DESC=1; acl_probe "$id" -- init mloadx file $((300 * mib)) $((300 * mib)) $((600 * mib)) alloc $((300 * mib)) alloc $((200 * mib)))")" \
		"init 0|mload 0|alloc 0|alloc 207001"
}

# CANN 8.5's libacl_rt_impl.so exports each public function's body as
# <name>Impl; dlsym of such a twin hands out the public name's hook, and the
# library's own twin of a name that is not hooked. (dlvsym takes the same
# path; glibc answers no version of an unversioned symbol, so the stub's
# twins cannot show it.)
t_acl_impl_twins_hand_out_the_hooks() {
	local id
	id=$(acl_job $GIB) || fail "job setup"
	expect "dlsym of aclrtMallocImpl, an unhooked twin, no such twin" \
		"$(lines "$(acl_probe "$id" -- init implsym aclrtMallocImpl implsym aclrtGetDeviceImpl implsym aclrtNoSuchCallImpl)")" \
		"init 0|implsym libvgpu|implsym libascendcl|implsym none"
	expect "aclrtMallocImpl by dlsym past / at / past the limit" \
		"$(lines "$(acl_probe "$id" -- init implalloc $((GIB + 1)) implalloc $GIB implalloc 1)")" \
		"init 0|implalloc 207001|implalloc 0|implalloc 207001"
}

# aclrtGetMemInfo's kinds as CANN 8.5 numbers them: every HBM kind reports
# the limit (HBM P2P too), the DDR kinds (DDR P2P too) are host memory.
t_acl_memory_queries_by_kind() {
	local id q=$((256 * 1048576)) attr
	id=$(acl_job $GIB) || fail "job setup"
	for attr in 8 11; do # ACL_HBM_MEM_P2P_HUGE, ACL_HBM_MEM_P2P_HUGE1G
		expect "aclrtGetMemInfo($attr) after 256 MiB" "$(lines "$(acl_probe "$id" -- init alloc $q meminfo $attr)")" \
			"init 0|alloc 0|meminfo 0 $((GIB - q)) $GIB"
	done
	expect "aclrtGetMemInfo(ACL_DDR_MEM_P2P_HUGE) is the host's" \
		"$(lines "$(acl_probe "$id" -- init alloc $q meminfo 6)")" "init 0|alloc 0|meminfo 0 $((32 * GIB)) $((64 * GIB))"
}

ACL_PATH_TESTS=(acl_model_ri_and_v2_work_is_paced aclnn_operators_are_paced_once
	acl_retained_physical_memory_stays_charged acl_free_with_dev_sync_gives_memory_back
	acl_bundles_are_refused_in_a_job acl_malloc_config_names_the_current_device
	acl_model_loads_charge_every_partition acl_impl_twins_hand_out_the_hooks acl_memory_queries_by_kind)

# Sourced by tests/interposer/run: what frameworks run that is not a plain
# allocation or launch.
#
# Graphs that allocate device memory when they run (graph_charges.h), as
# PyTorch's CUDA graphs with the cudaMallocAsync backend do. Nothing is
# allocated when an allocation node is made or a stream-ordered allocation
# is captured; the driver takes the memory from the device's graph pool at
# launch and keeps it until a trim, so the job is charged what that pool
# reserves and a launch that would not fit is refused before anything runs.

t_graph_memory_is_charged_at_launch() {
	local id m=$((800 * 1048576)) mode
	expect "the stub driver without libvgpu: a graph takes device memory at launch, keeps it until trimmed" \
		"$(lines "$(probe "" -- init gnode $((6 * GIB)) alloc $((6 * GIB)) free ginst flags glaunch free alloc $((6 * GIB)) gtrim alloc $((6 * GIB)))")" \
		"init 0|gnode 0|alloc 0|free 0|ginst 0|glaunch 0|free 0|alloc 2|gtrim 0|alloc 0"
	id=$(vgpu_job $GIB) || fail "job setup"
	for mode in flags old v2 params; do
		expect "instantiated by $mode: a graph allocating 2 GiB is refused at launch, nothing taken" \
			"$(lines "$(probe "$id" -- init gnode $((2 * GIB)) ginst $mode glaunch alloc $m)")" \
			"init 0|gnode 0|ginst 0|glaunch 2|alloc 0"
		expect "instantiated by $mode: 800 MiB runs and is charged" \
			"$(lines "$(probe "$id" -- init gnode $m ginst $mode glaunch alloc $m)")" \
			"init 0|gnode 0|ginst 0|glaunch 0|alloc 2"
	done
	expect "the node itself charges nothing until a launch" \
		"$(lines "$(probe "$id" -- init gnode $m alloc $m ginst flags glaunch)")" \
		"init 0|gnode 0|alloc 0|ginst 0|glaunch 2"
	expect "freed graph memory stays in the graph pool, charged, until cuDeviceGraphMemTrim" \
		"$(lines "$(probe "$id" -- init gnode $m ginst flags glaunch free alloc $m gtrim alloc $m)")" \
		"init 0|gnode 0|ginst 0|glaunch 0|free 0|alloc 2|gtrim 0|alloc 0"
	expect "a second launch reuses the pool's memory without a second charge" \
		"$(lines "$(probe "$id" -- init gnode $m ginst flags glaunch free glaunch gtrim alloc $m)")" \
		"init 0|gnode 0|ginst 0|glaunch 0|free 0|glaunch 0|gtrim 0|alloc 2"
	expect "two launches holding 2 x 800 MiB at once: the second is refused" \
		"$(lines "$(probe "$id" -- init gnode $m ginst flags glaunch gnode $m ginst flags glaunch)")" \
		"init 0|gnode 0|ginst 0|glaunch 0|gnode 0|ginst 0|glaunch 2"
	expect "cuGraphAddNode's allocation nodes count too" \
		"$(lines "$(probe "$id" -- init gaddnode $((2 * GIB)) ginst flags glaunch gaddnode $m ginst flags)")" \
		"init 0|gaddnode 0|ginst 0|glaunch 2|gaddnode 0|ginst 0"
	expect "a child graph moved into its parent brings its allocation nodes" \
		"$(lines "$(probe "$id" -- init gnode $((2 * GIB)) gchild ginst flags glaunch)")" \
		"init 0|gnode 0|gchild 0|ginst 0|glaunch 2"
	expect "the driver's graph entry points come from libvgpu.so through cuGetProcAddress" \
		"$(lines "$(probe "$id" -- proc cuGraphAddMemAllocNode 12040 0 proc cuGraphInstantiate 12040 0 proc cuStreamEndCapture 12040 0 proc cuDeviceGraphMemTrim 12040 0)")" \
		"proc 0 libvgpu|proc 0 libvgpu|proc 0 libvgpu|proc 0 libvgpu"
}

# An upload (cuGraphUpload, or the upload flag of cuGraphInstantiateWithParams)
# backs a graph's allocations from the graph pool without running it, so it
# is admitted as a launch is: before, an uploaded graph held its memory
# uncharged until its first launch, or for ever if never launched.
t_graph_upload_is_admitted() {
	local id m=$((800 * 1048576)) probe_cmd
	expect "the stub driver without libvgpu: an upload takes the graph's memory from its pool" \
		"$(lines "$(probe "" -- init gnode $((6 * GIB)) ginst flags gupload alloc $((6 * GIB)) gtrim alloc $((6 * GIB)))")" \
		"init 0|gnode 0|ginst 0|gupload 0|alloc 2|gtrim 0|alloc 0"
	expect "the stub driver without libvgpu: so does the upload flag" \
		"$(lines "$(probe "" -- init gnode $((6 * GIB)) ginst upload alloc $((6 * GIB)) gtrim alloc $((6 * GIB)))")" \
		"init 0|gnode 0|ginst 0|alloc 2|gtrim 0|alloc 0"
	for probe_cmd in probe hip_probe; do
		if [ $probe_cmd = probe ]; then id=$(vgpu_job $GIB); else id=$(dcu_job $GIB); fi || fail "job setup"
		expect "$probe_cmd: uploading a graph that allocates 2 GiB is refused, nothing taken" \
			"$(lines "$($probe_cmd "$id" -- init gnode $((2 * GIB)) ginst flags gupload alloc $m)")" \
			"init 0|gnode 0|ginst 0|gupload 2|alloc 0"
		expect "$probe_cmd: an uploaded 800 MiB graph is charged before it runs" \
			"$(lines "$($probe_cmd "$id" -- init gnode $m ginst flags gupload alloc $m)")" \
			"init 0|gnode 0|ginst 0|gupload 0|alloc 2"
		expect "$probe_cmd: its launch uses the uploaded memory; a trim gives it back" \
			"$(lines "$($probe_cmd "$id" -- init gnode $m ginst flags gupload glaunch free gtrim alloc $m)")" \
			"init 0|gnode 0|ginst 0|gupload 0|glaunch 0|free 0|gtrim 0|alloc 0"
		expect "$probe_cmd: instantiated with the upload flag, 2 GiB is refused, nothing taken" \
			"$(lines "$($probe_cmd "$id" -- init gnode $((2 * GIB)) ginst upload alloc $m)")" \
			"init 0|gnode 0|ginst 2|alloc 0"
		expect "$probe_cmd: instantiated with the upload flag, 800 MiB is charged at once" \
			"$(lines "$($probe_cmd "$id" -- init gnode $m ginst upload alloc $m)")" \
			"init 0|gnode 0|ginst 0|alloc 2"
	done
	expect "cuGetProcAddress hands out the upload hook" \
		"$(lines "$(probe "$id" -- proc cuGraphUpload 12040 0 proc cuGraphUpload 12040 1)")" \
		"proc 0 libvgpu|proc 0 libvgpu"
}

# Stream capture (PyTorch's torch.cuda.graph, in CUDA's strictest, global
# mode): launches on a capturing stream do not run, and while a capture is
# underway the driver forbids querying or waiting for events (from any
# thread) and recording one on the legacy stream; any of these invalidates
# the program's capture. Before, the pacer's events did both, so a job at
# a fractional share could not capture a graph at all.
t_stream_capture_survives_pacing() {
	local id out
	id=$(vgpu_job $GIB) || fail "job setup" # 10 shares
	expect "the stub driver without libvgpu: kernels captured in global mode, graph instantiated and run" \
		"$(lines "$(probe "" -- init capture klaunch 20 endcapture ginst flags glaunch)")" \
		"init 0|capture 0|klaunch 0|endcapture 0|ginst 0|glaunch 0"
	expect "the stub driver enforces the capture rules: a synchronisation invalidates the capture" \
		"$(lines "$(probe "" -- init capture sync endcapture)")" \
		"init 0|capture 0|sync 900|endcapture 901"
	expect "in a job at 10 shares: 20 kernels captured, the capture survives the pacer" \
		"$(lines "$(probe "$id" -- init capture klaunch 20 endcapture ginst flags glaunch)")" \
		"init 0|capture 0|klaunch 0|endcapture 0|ginst 0|glaunch 0"
	expect "kernels launched just before the capture, still pending, do not break it either" \
		"$(lines "$(probe "$id" -- init klaunch 2 capture klaunch 2 endcapture)")" \
		"init 0|klaunch 0|capture 0|klaunch 0|endcapture 0"
	out=$(probe "$id" -- init capture klaunch 4 endcapture work 0.6 5000 kernel | grep ^work)
	[ "$(busy "$out")" -ge 3 ] && [ "$(busy "$out")" -le 25 ] ||
		fail "after the capture ended, kernels at 10 shares kept the device $(busy "$out") % busy ($out)"
	id=$(acl_job $GIB) || fail "job setup"
	expect "AscendCL: the stub runtime enforces the capture rules (507903: invalidated)" \
		"$(lines "$(env LD_PRELOAD= "$ACL_PROBE" init capture sync endcapture)")" \
		"init 0|capture 0|sync 507099|endcapture 507903"
	expect "AscendCL in a job at 10 shares: 20 kernels captured into a model RI (torch_npu's NPUGraph), replayed" \
		"$(lines "$(acl_probe "$id" -- init klaunch 2 capture klaunch 20 endcapture rirun)")" \
		"init 0|klaunch 0|capture 0|klaunch 0|endcapture 0|rirun 0"
	id=$(dcu_job $GIB) || fail "job setup"
	expect "HIP: the stub runtime enforces the capture rules" \
		"$(lines "$(env LD_PRELOAD= "$HIP_PROBE" init capture sync endcapture)")" \
		"init 0|capture 0|sync 900|endcapture 901"
	expect "HIP in a job at 10 shares: 20 kernels captured, the capture survives the pacer" \
		"$(lines "$(hip_probe "$id" -- init capture klaunch 20 endcapture ginst flags glaunch)")" \
		"init 0|capture 0|klaunch 0|endcapture 0|ginst 0|glaunch 0"
	out=$(hip_probe "$id" -- init capture klaunch 4 endcapture work 0.6 5000 module | grep ^work)
	[ "$(busy "$out")" -ge 3 ] && [ "$(busy "$out")" -le 25 ] ||
		fail "HIP: after the capture ended, kernels at 10 shares kept the device $(busy "$out") % busy ($out)"
}

# HIP work runs on its stream's device, whichever device is current (a
# stream keeps the device it was made on): it is paced by the job's share of
# that device. Before, it was paced by the current device's share.
t_hip_launches_paced_on_the_streams_device() {
	local id out
	out=$(env LD_PRELOAD= "$HIP_PROBE" init stream 1 work 0.6 5000 onstream | grep ^work)
	[ "$(busy "$out")" -ge 80 ] || fail "the stub runtime without libvgpu kept device 1 only $(busy "$out") % busy ($out)"
	id=$(limits_job "$DCU0,$GIB,100,100,dcu" "$DCU1,$GIB,10,100,dcu") || fail "job setup"
	out=$(hip_probe "$id" -- init stream 1 work 0.6 5000 onstream | grep ^work)
	[ "$(busy "$out")" -ge 3 ] && [ "$(busy "$out")" -le 25 ] ||
		fail "kernels on device 1's stream at 10 shares, device 0 (whole) current, kept it $(busy "$out") % busy ($out)"
}

# NCCL's NVLink SHARP buffers: memory made by cuMemCreate is bound to a
# multicast object, which holds it as a mapping does. Before, a job could
# bind, unmap and release, get its charge back and keep the memory.
t_multicast_binding_keeps_memory_charged() {
	local id m=$((800 * 1048576)) cmd
	expect "the stub driver without libvgpu: bound memory stays after unmap and release, until unbound" \
		"$(lines "$(probe "" -- init vmap $((6 * GIB)) mcbind vfree alloc $((6 * GIB)) mcunbind alloc $((6 * GIB)))")" \
		"init 0|vmap 0|mcbind 0|vfree 0|alloc 2|mcunbind 0|alloc 0"
	id=$(vgpu_job $GIB) || fail "job setup"
	for cmd in mcbind mcbindaddr; do
		expect "$cmd: unmapped and released, still charged until unbound" \
			"$(lines "$(probe "$id" -- init vmap $m $cmd vfree alloc $m mcunbind alloc $m)")" \
			"init 0|vmap 0|$cmd 0|vfree 0|alloc 2|mcunbind 0|alloc 0"
	done
	expect "unbound but still mapped: charged until the mapping goes too" \
		"$(lines "$(probe "$id" -- init vmap $m mcbind mcunbind alloc $m vfree alloc $m)")" \
		"init 0|vmap 0|mcbind 0|mcunbind 0|alloc 2|vfree 0|alloc 0"
	expect "releasing the multicast object is not taken as an unbind (the job stays charged)" \
		"$(lines "$(probe "$id" -- init vmap $m mcbind vfree mcrelease alloc $m)")" \
		"init 0|vmap 0|mcbind 0|vfree 0|mcrelease 0|alloc 2"
}

# PyTorch's cudaMallocAsync backend under CUDA graph capture: stream-ordered
# allocations on a capturing stream become allocation nodes of the graph.
t_captured_allocations_are_charged_at_launch() {
	local id id2 m=$((800 * 1048576)) cmd
	id=$(vgpu_job $GIB) || fail "job setup"
	for cmd in async async_ptsz pool pool_ptsz; do
		expect "$cmd in capture: nothing charged while capturing, the launch is" \
			"$(lines "$(probe "$id" -- init capture $cmd $m endcapture alloc $m free ginst flags glaunch alloc $m)")" \
			"init 0|capture 0|$cmd 0|endcapture 0|alloc 0|free 0|ginst 0|glaunch 0|alloc 2"
		expect "$cmd in capture: a graph of 2 x 800 MiB is refused at launch" \
			"$(lines "$(probe "$id" -- init capture $cmd $m $cmd $m endcapture ginst flags glaunch alloc $m)")" \
			"init 0|capture 0|$cmd 0|$cmd 0|endcapture 0|ginst 0|glaunch 2|alloc 0"
	done
	expect "a free captured into a graph frees nothing until the graph runs: still charged" \
		"$(lines "$(probe "$id" -- init alloc $m capture afree endcapture alloc $m)")" \
		"init 0|alloc 0|capture 0|afree 0|endcapture 0|alloc 2"
	id2=$(dcu_job $GIB) || fail "job setup"
	expect "HIP: a free captured into a graph frees nothing until the graph runs: still charged" \
		"$(lines "$(hip_probe "$id2" -- init alloc $m capture afree endcapture alloc $m)")" \
		"init 0|alloc 0|capture 0|afree 0|endcapture 0|alloc 2"
	expect "after the capture, stream-ordered allocations are charged as before" \
		"$(lines "$(probe "$id" -- init capture async $m endcapture async $m async $m)")" \
		"init 0|capture 0|async 0|endcapture 0|async 0|async 2"
}

# The same through HIP (MIOpen and PyTorch on ROCm capture hipGraphs).
t_hip_graph_memory_is_charged_at_launch() {
	local id m=$((800 * 1048576)) mode cmd
	expect "the stub runtime without libvgpu: a graph takes device memory at launch, keeps it until trimmed" \
		"$(lines "$(env LD_PRELOAD= "$HIP_PROBE" init gnode $((6 * GIB)) ginst flags glaunch free alloc $((6 * GIB)) gtrim alloc $((6 * GIB)))")" \
		"init 0|gnode 0|ginst 0|glaunch 0|free 0|alloc 2|gtrim 0|alloc 0"
	id=$(dcu_job $GIB) || fail "job setup"
	for mode in flags old params; do
		expect "instantiated by $mode: 2 GiB refused at launch, 800 MiB runs and is charged" \
			"$(lines "$(hip_probe "$id" -- init gaddnode $((2 * GIB)) ginst $mode glaunch alloc $m)")$(lines "$(hip_probe "$id" -- init gnode $m ginst $mode glaunch alloc $m)")" \
			"init 0|gaddnode 0|ginst 0|glaunch 2|alloc 0init 0|gnode 0|ginst 0|glaunch 0|alloc 2"
	done
	expect "freed graph memory stays charged until hipDeviceGraphMemTrim; a destroyed instance's memory too" \
		"$(lines "$(hip_probe "$id" -- init gnode $m ginst flags glaunch free gdestroy alloc $m gtrim alloc $m)")" \
		"init 0|gnode 0|ginst 0|glaunch 0|free 0|gdestroy 0|alloc 2|gtrim 0|alloc 0"
	for cmd in async pool; do
		expect "$cmd in capture: nothing charged while capturing, the launch is" \
			"$(lines "$(hip_probe "$id" -- init capture $cmd $m endcapture alloc $m free ginst flags glaunch alloc $m)")" \
			"init 0|capture 0|$cmd 0|endcapture 0|alloc 0|free 0|ginst 0|glaunch 0|alloc 2"
	done
	for cmd in gchild gaddchild gclone; do
		expect "$cmd: a graph allocating 2 GiB, cloned, is refused at launch" \
			"$(lines "$(hip_probe "$id" -- init gnode $((2 * GIB)) $cmd ginst flags glaunch alloc $m)")" \
			"init 0|gnode 0|$cmd 0|ginst 0|glaunch 2|alloc 0"
	done
	expect "HIP_MEM_POOL_USE_VM=0 (clr then allocates when the node is made): allocation nodes refused in a job" \
		"$(lines "$(in_job "$id" env HIP_MEM_POOL_USE_VM=0 LD_PRELOAD="$LIB" "$HIP_PROBE" init gnode $m gaddnode $m capture async $m endcapture 2>"$WORK/stderr")")" \
		"init 0|gnode 801|gaddnode 801|capture 0|async 801|endcapture 0"
	grep -q "HIP_MEM_POOL_USE_VM=0" "$WORK/stderr" || fail "no warning naming HIP_MEM_POOL_USE_VM on stderr"
	expect "hipGetProcAddress hands out the graph hooks" \
		"$(lines "$(hip_probe "$id" -- init proc hipGraphAddMemAllocNode 0 proc hipGraphInstantiateWithFlags 0 proc hipStreamEndCapture 2)")" \
		"init 0|proc 0 libvgpu|proc 0 libvgpu|proc 0 libvgpu"
}

# aclnn operators (torch_npu's path): the operator library queues their work
# through the runtime's internal calls, so dlsym hands out a paced stand-in
# for each operator's run function (aclnn_hooks.cc).
t_aclnn_operators_are_paced() {
	local id out
	id=$(acl_job $GIB) || fail "job setup" # 10 shares
	expect "dlsym hands out a stand-in for an operator's run function, the library's own for the rest" \
		"$(lines "$(acl_probe "$id" -- aclnnsym aclnnBusy aclnnsym aclnnBusyGetWorkspaceSize aclnnsym aclnnInit aclnnsym aclnnNoSuchOp)")" \
		"aclnnsym libvgpu|aclnnsym libopapi|aclnnsym libopapi|aclnnsym none"
	out=$(env LD_PRELOAD= "$ACL_PROBE" init work 0.6 5000 aclnn | grep ^work)
	[ "$(busy "$out")" -ge 80 ] || fail "the stub operator library without libvgpu kept the device only $(busy "$out") % busy ($out)"
	out=$(acl_probe "$id" -- init work 0.6 5000 aclnn | grep ^work)
	[ "$(busy "$out")" -ge 3 ] && [ "$(busy "$out")" -le 25 ] ||
		fail "aclnn operators at 10 shares kept the device $(busy "$out") % busy ($out)"
}

# A CUkernel (CUDA 12's context-free kernels) may be launched into a stream
# of another context than the current one, and runs on that context's
# device: it is paced there (launch_hooks.cc), not on the current device,
# and not left unpaced because the pacer's events cannot be recorded on a
# stream of another context.
t_kernels_on_another_contexts_stream_are_paced() {
	local id out
	out=$(env LD_PRELOAD= "$PROBE" init work 0.6 5000 otherctx | grep ^work)
	[ "$(busy "$out")" -ge 80 ] || fail "the stub driver without libvgpu kept device 1 only $(busy "$out") % busy ($out)"
	id=$(limits_job "$DEV0,$GIB,10,100" "$DEV1,$GIB,10,100") || fail "job setup"
	out=$(probe "$id" -- init work 0.6 5000 otherctx | grep ^work)
	[ "$(busy "$out")" -ge 3 ] && [ "$(busy "$out")" -le 25 ] ||
		fail "kernels on device 1's stream at 10 shares, device 0 current, kept it $(busy "$out") % busy ($out)"
}

# Offline models on Ascend: the runtime allocates a model's work and weight
# memory itself unless the program hands it in; that part is charged at
# the load (as aclmdlQuerySize says) and given back at aclmdlUnload.
t_acl_model_loads_are_charged() {
	local id how mib=1048576
	expect "the stub runtime without libvgpu: a loaded model takes device memory" \
		"$(lines "$(env LD_PRELOAD= "$ACL_PROBE" init mload file $((6 * GIB)) $GIB alloc $((2 * GIB)) munload alloc $((2 * GIB)))")" \
		"init 0|mload 0|alloc 207001|munload 0|alloc 0"
	id=$(acl_job $GIB) || fail "job setup"
	for how in file mem fileq memq config; do
		expect "$how: a model of 600 + 600 MiB is refused, nothing taken" \
			"$(lines "$(acl_probe "$id" -- init mload $how $((600 * mib)) $((600 * mib)) alloc $((800 * mib)))")" \
			"init 0|mload 207001|alloc 0"
		expect "$how: 300 + 300 MiB is charged until unloaded" \
			"$(lines "$(acl_probe "$id" -- init mload $how $((300 * mib)) $((300 * mib)) alloc $((800 * mib)) munload alloc $((800 * mib)))")" \
			"init 0|mload 0|alloc 207001|munload 0|alloc 0"
	done
	expect "aclmdlLoadFromFileWithMem with both parts from aclrtMalloc: charged once" \
		"$(lines "$(acl_probe "$id" -- init mload filemem $((400 * mib)) $((400 * mib)) alloc $((200 * mib)) alloc $((100 * mib)))")" \
		"init 0|mload 0|alloc 0|alloc 207001"
	expect "WithMem with a null weight pointer: the runtime's weight memory is charged" \
		"$(lines "$(acl_probe "$id" -- init mload fileweight $((400 * mib)) $((400 * mib)) alloc $((200 * mib)) alloc $((100 * mib)))")" \
		"init 0|mload 0|alloc 0|alloc 207001"
	expect "a config handle with the work memory handed in: the weight is charged" \
		"$(lines "$(acl_probe "$id" -- init mload configmem $((400 * mib)) $((700 * mib)))")" \
		"init 0|mload 207001"
}

FRAMEWORK_TESTS=(acl_model_loads_are_charged kernels_on_another_contexts_stream_are_paced graph_memory_is_charged_at_launch captured_allocations_are_charged_at_launch
	hip_graph_memory_is_charged_at_launch aclnn_operators_are_paced graph_upload_is_admitted
	multicast_binding_keeps_memory_charged stream_capture_survives_pacing hip_launches_paced_on_the_streams_device)

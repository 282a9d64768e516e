# Sourced by tests/interposer/run: HIP entry points that allocate device
# memory or start device work beyond the plain paths of run itself.

# hipMipmappedArrayCreate is the runtime's hipMallocMipmappedArray with a
# driver-style descriptor; either free call frees an array made either way.
t_hip_mipmapped_array_create_is_charged() {
	local id
	expect "the stub runtime without libvgpu: hipMipmappedArrayCreate takes device memory" \
		"$(lines "$(env LD_PRELOAD= "$HIP_PROBE" init mipmapcreate 32768 32768 0 1 0 alloc $((6 * GIB)))")" \
		"init 0|mipmapcreate 0|alloc 2"
	id=$(dcu_job $GIB) || fail "job setup"
	expect "hipMipmappedArrayCreate: every level counts (2 levels of 16384^2 floats pass 1 GiB, 1 does not)" \
		"$(lines "$(hip_probe "$id" -- init mipmapcreate 16384 16384 0 2 0 mipmapcreate 16384 16384 0 1 0 alloc 1 free mipmapcreate 16384 16384 0 1 0)")" \
		"init 0|mipmapcreate 2|mipmapcreate 0|alloc 2|free 0|mipmapcreate 0"
	expect "hipFreeMipmappedArray frees a hipMipmappedArrayCreate array, hipMipmappedArrayDestroy a hipMallocMipmappedArray one" \
		"$(lines "$(hip_probe "$id" -- init mipmapcreate 16384 16384 0 1 0 mmfree free alloc $GIB free mipmap 16384 16384 1 mmfree destroy alloc $GIB)")" \
		"init 0|mipmapcreate 0|mmfree 0|alloc 0|free 0|mipmap 0|mmfree 0|alloc 0"
}

# A layered mipmapped array (hipArrayLayered) has all its layers (its
# depth) at every level: 13 layers of 4096^2 floats in 2 levels are
# 13 x (64 + 16) MiB = 1040 MiB, 12 of them 960 MiB.
t_hip_layered_mipmaps_count_every_layer() {
	local id cmd mib=1048576
	id=$(dcu_job $GIB) || fail "job setup"
	for cmd in mipmap3d mipmapcreate; do
		expect "$cmd: 13 layers past / 12 at the limit, with 100 MiB more past it" \
			"$(lines "$(hip_probe "$id" -- init $cmd 4096 4096 13 2 1 $cmd 4096 4096 12 2 1 alloc $((100 * mib)) alloc $((60 * mib)))")" \
			"init 0|$cmd 2|$cmd 0|alloc 2|alloc 0"
	done
	expect "mipmap3d: a 3D array's levels halve its depth (512^3 floats, 2 levels: 576 MiB)" \
		"$(lines "$(hip_probe "$id" -- init mipmap3d 512 512 512 2 0 alloc $((448 * mib)) alloc $((449 * mib)))")" \
		"init 0|mipmap3d 0|alloc 0|alloc 2"
}

# The runtime allocates each __managed__ variable a module registers
# (__hipRegisterManagedVar, from the program's module constructor) without
# going through hipMallocManaged: it is charged as hipMallocManaged is, and
# one past the limit is not allocated at all (its pointer stays null).
t_hip_managed_variables_are_charged() {
	local id mib=1048576
	expect "the stub runtime without libvgpu: a __managed__ variable takes device memory" \
		"$(lines "$(env LD_PRELOAD= "$HIP_PROBE" managedvar table $((6 * GIB)) init alloc $((4 * GIB)))")" \
		"managedvar set|init 0|alloc 2"
	id=$(dcu_job $GIB) || fail "job setup"
	expect "a 600 MiB __managed__ variable is charged for the life of the process" \
		"$(lines "$(hip_probe "$id" -- managedvar table $((600 * mib)) init alloc $((600 * mib)) alloc $((400 * mib)))")" \
		"managedvar set|init 0|alloc 2|alloc 0"
	expect "a 2 GiB one is refused: not allocated, its pointer null, nothing charged" \
		"$(lines "$(hip_probe "$id" -- managedvar big_table $((2 * GIB)) init alloc $GIB)")" "managedvar null|init 0|alloc 0"
	grep -q "^libvgpu: __managed__ variable big_table of $((2 * GIB)) bytes is not allocated (past job $id's limit of $GIB bytes on HIP device 0): its pointer is null$" \
		"$WORK/stderr" || fail "no warning naming the variable, its size and the limit: $(cat "$WORK/stderr")"
	[ "$(grep -c big_table "$WORK/stderr")" = 1 ] || fail "more than one warning: $(cat "$WORK/stderr")"
	expect "dlsym hands out the hooks" \
		"$(lines "$(hip_probe "$id" -- sym __hipRegisterManagedVar sym hipMipmappedArrayCreate sym hipMipmappedArrayDestroy)")" \
		"sym libvgpu|sym libvgpu|sym libvgpu"
}

# The runtime allocates hipMallocAsync from the current pool of the
# stream's device, whatever device is current.
t_hip_async_allocations_charge_the_streams_device() {
	local id m=$((800 * 1048576)) mib=1048576
	expect "the stub runtime without libvgpu: device 0 current, hipMallocAsync on device 1's stream takes device 1's memory" \
		"$(lines "$(env LD_PRELOAD= "$HIP_PROBE" init stream 1 async $((6 * GIB)) alloc $((6 * GIB)) init 1 alloc $((4 * GIB)))")" \
		"init 0|stream 0|async 0|alloc 0|init 0|alloc 2"
	id=$(limits_job "$DCU0,$GIB,10,100,dcu" "$DCU1,$GIB,10,100,dcu") || fail "job setup"
	expect "device 0 current, a stream of device 1: the allocation counts against device 1's limit" \
		"$(lines "$(hip_probe "$id" -- init stream 1 async $m async $m alloc $m init 1 alloc $((300 * mib)) alloc $((200 * mib)))")" \
		"init 0|stream 0|async 0|async 2|alloc 0|init 0|alloc 2|alloc 0"
	expect "freed back into device 1's pool, trimmed: device 1's memory comes back" \
		"$(lines "$(hip_probe "$id" -- init stream 1 async $m free init 1 trim 0 alloc $m)")" \
		"init 0|stream 0|async 0|free 0|init 0|trim 0|alloc 0"
}

# hipMallocFromPoolAsync allocates on the pool's device: a device's default
# pool, or a pool hipMemPoolCreate made there.
t_hip_pool_allocations_charge_the_pools_device() {
	local id m=$((800 * 1048576)) mib=1048576
	expect "the stub runtime without libvgpu: device 0 current, a pool made on device 1 takes device 1's memory" \
		"$(lines "$(env LD_PRELOAD= "$HIP_PROBE" init mkpool 1 frompool $((6 * GIB)) alloc $((6 * GIB)) init 1 alloc $((4 * GIB)))")" \
		"init 0|mkpool 0|frompool 0|alloc 0|init 0|alloc 2"
	id=$(limits_job "$DCU0,$GIB,10,100,dcu" "$DCU1,$GIB,10,100,dcu") || fail "job setup"
	expect "device 0 current: device 1's default pool counts against device 1's limit" \
		"$(lines "$(hip_probe "$id" -- init devpool 1 $m devpool 1 $m alloc $m init 1 alloc $((300 * mib)) alloc $((200 * mib)))")" \
		"init 0|devpool 0|devpool 2|alloc 0|init 0|alloc 2|alloc 0"
	expect "device 0 current: a pool hipMemPoolCreate made on device 1 counts against device 1's limit" \
		"$(lines "$(hip_probe "$id" -- init mkpool 1 frompool $m frompool $m alloc $m init 1 alloc $((300 * mib)) alloc $((200 * mib)))")" \
		"init 0|mkpool 0|frompool 0|frompool 2|alloc 0|init 0|alloc 2|alloc 0"
}

HIP_PATH_TESTS=(hip_mipmapped_array_create_is_charged hip_layered_mipmaps_count_every_layer hip_managed_variables_are_charged
	hip_async_allocations_charge_the_streams_device hip_pool_allocations_charge_the_pools_device)

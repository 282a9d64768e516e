#!/usr/bin/env python3
"""One sample of the lifecycle soak's invariants (tests/cluster/soak-tests.sh).

Reads `scontrol -d -o show job` and `scontrol -o show node` (the files
given as arguments) and prints one line per broken invariant, nothing when
all hold:
  * no share bit of a node is held by two running jobs;
  * a job holding less than a device on a node (a fractional job) has all
    its bits there on one device; a job of whole devices holds whole ones;
  * no node has more bits allocated than it has (devices x S);
  * a node's vgpu AllocTRES adds up: gres/vgpu equals the sum of its types
    (skipped for nodes named in the third argument, a comma list: those
    that have not registered since slurmctld restarted).
Exit status 0 either way; 2 when an input cannot be read.
"""
import re
import sys

S = 100  # SharesPerDevice of the lab (cluster-up)


def fields(line):
    """key=value pairs of one `scontrol -o` record (values have no blanks)."""
    return dict(m.groups() for m in re.finditer(r'(\S+?)=(\S*)', line))


def bits_of(idx):
    out = []
    for part in filter(None, idx.split(',')):
        if '-' in part:
            a, b = part.split('-')
            out.extend(range(int(a), int(b) + 1))
        else:
            out.append(int(part))
    return out


def job_bits(record):
    """{node: [bits]} of a `scontrol -d -o show job` record (its detail
    part: `Nodes=n2 CPU_IDs=0 Mem=100 GRES=vgpu:dcu:30(IDX:400-429)`)."""
    held = {}
    for m in re.finditer(r'Nodes=(\S+) CPU_IDs=\S+ Mem=\S+ GRES=(\S*)', record):
        nodes, gres = m.groups()
        bits = []
        for idx in re.findall(r'vgpu[^(,]*\(IDX:([0-9,-]*)\)', gres):
            bits.extend(bits_of(idx))
        # One detail line may name several nodes with the same bits.
        for node in expand_hosts(nodes):
            held.setdefault(node, []).extend(bits)
    return held


def expand_hosts(spec):
    m = re.fullmatch(r'([a-z]+)\[([0-9,-]+)\]', spec)
    if not m:
        return spec.split(',')
    prefix, ranges = m.groups()
    return [prefix + str(n) for n in bits_of(ranges)]


def main():
    try:
        jobs = open(sys.argv[1]).read().splitlines()
        nodes = open(sys.argv[2]).read().splitlines()
    except (IndexError, OSError) as e:
        print('soak_check: %s' % e)
        return 2
    unregistered = set(filter(None, (sys.argv[3] if len(sys.argv) > 3 else '').split(',')))
    owner = {}
    twice = {}  # (node, job, job) -> bits held by both
    for record in jobs:
        f = fields(record)
        if f.get('JobState') != 'RUNNING':
            continue
        job = f.get('JobId')
        for node, bits in job_bits(record).items():
            for b in bits:
                if (node, b) in owner:
                    key = (node, owner[(node, b)], job)
                    twice[key] = twice.get(key, 0) + 1
                owner[(node, b)] = job
            devices = sorted({b // S for b in bits})
            if 0 < len(bits) < S and len(devices) != 1:
                print('job %s: %d shares on %s span devices %s' % (job, len(bits), node, devices))
            if len(bits) >= S:
                for d in devices:
                    n = sum(1 for b in bits if b // S == d)
                    if n != S:
                        print('job %s: %d shares on %s hold %d of device %d' % (job, len(bits), node, n, d))
    for (node, a, b), n in sorted(twice.items()):
        print('%d bits of %s held by both job %s and job %s' % (n, node, a, b))
    for record in nodes:
        f = fields(record)
        node = f.get('NodeName')
        cfg = dict(re.findall(r'gres/vgpu(?::(\w+))?=(\d+)', f.get('CfgTRES', '')))
        alloc = dict(re.findall(r'gres/vgpu(?::(\w+))?=(\d+)', f.get('AllocTRES', '')))
        total = int(cfg.get('', 0))
        held = sum(1 for (n, _) in owner if n == node)
        if held > total:
            print('%s: %d bits held by running jobs, more than its %d' % (node, held, total))
        if node in unregistered or not alloc:
            continue
        types = sum(int(v) for k, v in alloc.items() if k)
        if int(alloc.get('', 0)) != types:
            print('%s: AllocTRES gres/vgpu=%s but its types add up to %d (%s)' %
                  (node, alloc.get('', 0), types, f.get('AllocTRES')))
    return 0


if __name__ == '__main__':
    sys.exit(main())

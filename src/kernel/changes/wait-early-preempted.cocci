// SPDX-License-Identifier: GPL-2.0-only
// pvlock's description of the change seed 000 is about, as a semantic patch (spatch, from
// Debian's coccinelle package): pv_wait_early() in qspinlock_paravirt.h goes back to the
// rule of 2017 (75437bb304b2, reverted by 89340d0935c9 in v5.4). A queued waiter that checks
// its predecessor every PV_PREV_CHECK_MASK + 1 iterations halts early when the predecessor's
// node is no longer vcpu_running -- and, under this rule, also when the predecessor's vCPU
// is preempted (vcpu_is_preempted(prev->cpu)).
//
// Written against what the rule says, not against one kernel's text: it matches
// pv_wait_early() whatever its parameters are called and whatever state constant it
// compares with, so it applies to every tree from v5.4 on whose pv_wait_early() ends in
// `return READ_ONCE(prev->state) != <running state>;`.
@restore_preempted_check@
identifier prev, loop;
expression running;
@@
 pv_wait_early(struct pv_node *prev, int loop)
 {
 ...
 return
-READ_ONCE(prev->state) != running
+READ_ONCE(prev->state) != running || vcpu_is_preempted(prev->cpu)
 ;
 }

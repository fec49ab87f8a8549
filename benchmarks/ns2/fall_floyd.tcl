# Fall and Floyd's drop-pattern experiment (examples/fall-floyd-drops.toml)
# in ns-2 2.35's one-way TCP agents: one bulk flow from s1 to k1 over
#
#   s1 --(8 Mb/s, 0.1 ms)-- r1 --(0.8 Mb/s, 100 ms)-- k1
#
# 1040-byte data packets (1000 bytes of data and 40 of headers, counted in
# packetSize_ with useHeaders_ off, so that the first packet is the size of
# the others), 40-byte ACKs, a 20-packet window, IW 1, no SYN, a 1 s initial
# RTO, a 200 ms minimum and a 1 ms clock tick; 100-packet queues. The listed
# data packets crossing r1->k1 are dropped (ErrorModel/List counts from 0).
# The flow starts at 0.5 s, so that the agents' set-up is over: subtract
# 0.5 s from the trace's times.
#
# usage: ns fall_floyd.tcl VARIANT "DROPS" TRACE_FILE [delack|ack [WINDOW [QLIMIT [SECONDS]]]]
#   VARIANT: tahoe, reno, newreno or sack (Agent/TCP, /Reno, /Newreno,
#   /Sack1 with TCPSink/Sack1); DROPS: e.g. "19 21" for the 20th and 22nd,
#   or "" for none; delack: the sink delays ACKs (TCPSink/DelAck,
#   TCPSink/Sack1/DelAck: an ACK for every second segment, else after 100 ms;
#   SYN_immediate_ack_ off, as there is no SYN and the first data segment is
#   no reason to hurry); WINDOW: window_ (20); QLIMIT: the r1->k1 queue's
#   queue-limit (100), which ns-2's DropTail counts with the packet being
#   sent, so QLIMIT - 1 wait. SECONDS: how long the flow runs (3).
# The trace is the r1->k1 queue's ('+' enqueue, '-' dequeue, 'd' drop).
set variant [lindex $argv 0]
set drops [lindex $argv 1]
set delack [expr {[llength $argv] > 3 && [lindex $argv 3] == "delack"}]
set window [expr {[llength $argv] > 4 ? [lindex $argv 4] : 20}]
set qlimit [expr {[llength $argv] > 5 ? [lindex $argv 5] : 100}]
set stop [expr {[llength $argv] > 6 ? [lindex $argv 6] + 0.5 : 3.5}]
set da [expr {$delack ? "/DelAck" : ""}]
set ns [new Simulator]
set s1 [$ns node]
set r1 [$ns node]
set k1 [$ns node]
$ns duplex-link $s1 $r1 8Mb 0.1ms DropTail
$ns duplex-link $r1 $k1 0.8Mb 100ms DropTail
foreach {a b} [list $s1 $r1 $r1 $s1 $k1 $r1] { $ns queue-limit $a $b 100 }
$ns queue-limit $r1 $k1 $qlimit
switch $variant {
  tahoe { set tcp [new Agent/TCP]; set sink [new Agent/TCPSink$da] }
  reno { set tcp [new Agent/TCP/Reno]; set sink [new Agent/TCPSink$da] }
  newreno { set tcp [new Agent/TCP/Newreno]; set sink [new Agent/TCPSink$da] }
  sack { set tcp [new Agent/TCP/Sack1]; set sink [new Agent/TCPSink/Sack1$da] }
  default { puts stderr "unknown variant $variant"; exit 1 }
}
$tcp set window_ $window
$tcp set packetSize_ 1040
$tcp set useHeaders_ false
$tcp set syn_ false
$tcp set delay_growth_ false
$tcp set windowInit_ 1
$tcp set minrto_ 0.2
$tcp set rtxcur_init_ 1.0
$tcp set tcpTick_ 0.001
if {$delack} {
  $sink set interval_ 0.1
  $sink set SYN_immediate_ack_ false
}
$ns attach-agent $s1 $tcp
$ns attach-agent $k1 $sink
$ns connect $tcp $sink
set ftp [$tcp attach-app FTP]
set em [new ErrorModel/List]
$em droplist $drops
if {$drops != ""} { $ns lossmodel $em $r1 $k1 }
set tf [open [lindex $argv 2] w]
$ns trace-queue $r1 $k1 $tf
$ns at 0.5 "$ftp start"
$ns at $stop "close $tf; exit 0"
$ns run

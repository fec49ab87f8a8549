# RFC 2415's dumbbell, sourced by rfc2415_ftp.tcl and rfc2415_web.tcl: clients
# c(0..3) behind n0, servers s(0..3) behind n1, a 1.5 Mb/s, 50 ms bottleneck,
# 10 Mb/s, 1 ms access links, 25-packet DropTail queues everywhere. Data flows
# from the servers to the clients; `qm` monitors the bottleneck that way.
set n0 [$ns node]; set n1 [$ns node]
$ns duplex-link $n0 $n1 1.5Mb 50ms DropTail
$ns queue-limit $n0 $n1 25; $ns queue-limit $n1 $n0 25
for {set i 0} {$i < 4} {incr i} {
  set c($i) [$ns node]; set s($i) [$ns node]
  $ns duplex-link $c($i) $n0 10Mb 1ms DropTail
  $ns duplex-link $s($i) $n1 10Mb 1ms DropTail
  foreach {a b} [list $c($i) $n0 $n0 $c($i) $s($i) $n1 $n1 $s($i)] { $ns queue-limit $a $b 25 }
}
set qm [$ns monitor-queue $n1 $n0 ""]

# RFC 2415's dumbbell in ns-2 2.35 with a sourced web load, for
# benchmarks/ns2_rfc2415.py: web clients fetching pages of a primary and three
# embedded objects over HTTP/1.0 (a FullTcp connection per object, a request of
# 231 B, replies drawn from Mah's sizes), thinking Uniform(1 s, 5 s) from a
# page's end; FTP clients fetching 1 MB files back to back, a connection per
# file. The parameters are the RFC's (1.5 Mb/s, 50 ms, 25-packet queues, 10 Mb/s
# and 1 ms access links, 1460-byte segments, an 11-packet window) and ns-2's of
# 1998 (0.1 s clock tick, 0.2 s RTO floor, 3 s initial RTO).
#
# usage: ns rfc2415_web.tcl WEBS FTPS IW MODE SEED SIZES_CDF [DURATION]
#   MODE: "after" (the embedded objects once the primary has arrived) or
#   "with" (a page's four objects at once). SIZES_CDF: reply sizes as ns-2's
#   RandomVariable/Empirical reads them ("bytes count cdf" per line).
# It prints one line: pages, the median page delay (s), the bottleneck's drop
# rate and utilization and its arrivals in the data direction.
set webs [lindex $argv 0]; set ftps [lindex $argv 1]; set iw [lindex $argv 2]
set mode [lindex $argv 3]; set seed [lindex $argv 4]; set cdf [lindex $argv 5]
set dur 360.0
if {[llength $argv] > 6} { set dur [lindex $argv 6] }
global defaultRNG
$defaultRNG seed $seed
set ns [new Simulator]
Agent/TCP/FullTcp set segsize_ 1460
Agent/TCP/FullTcp set segsperack_ 1
Agent/TCP/FullTcp set nodelay_ true
Agent/TCP set window_ 11
Agent/TCP set windowInit_ $iw
Agent/TCP set tcpTick_ 0.1
Agent/TCP set minrto_ 0.2
Agent/TCP set rtxcur_init_ 3.0
source [file join [file dirname [info script]] rfc2415_dumbbell.tcl]
set sizes [new RandomVariable/Empirical]
$sizes loadCDF $cdf
$sizes set interpolation_ 1
set think [new RandomVariable/Uniform]; $think set min_ 1.0; $think set max_ 5.0
set delays {}
proc objsize {} {
  global sizes
  set v [expr int(ceil([$sizes value]))]
  if {$v < 1} { set v 1 }
  return $v
}
Application/TcpApp instproc recv {data} { eval $data }
# A connection from client node k to server node k: the request goes out, the
# server answers `bytes` when it has it, and `cb` runs when they have arrived.
proc fetch {k bytes req cb} {
  global ns c s
  set ct [new Agent/TCP/FullTcp]; set st [new Agent/TCP/FullTcp]
  $ns attach-agent $c($k) $ct; $ns attach-agent $s($k) $st
  $ns connect $ct $st; $st listen
  set ca [new Application/TcpApp $ct]; set sa [new Application/TcpApp $st]
  $ca connect $sa
  $ca send $req "$sa send $bytes {$cb; $ct close}"
}
proc page {j} {
  global ns mode
  set ::start($j) [$ns now]
  if {$mode == "with"} {
    set ::left($j) 4
    for {set o 0} {$o < 4} {incr o} { fetch [expr $j % 4] [objsize] 231 "objdone $j" }
  } else {
    fetch [expr $j % 4] [objsize] 231 "primdone $j"
  }
}
proc primdone {j} {
  set ::left($j) 3
  for {set o 0} {$o < 3} {incr o} { fetch [expr $j % 4] [objsize] 231 "objdone $j" }
}
proc objdone {j} {
  global ns think
  incr ::left($j) -1
  if {$::left($j) == 0} {
    lappend ::delays [expr [$ns now] - $::start($j)]
    $ns at [expr [$ns now] + [$think value]] "page $j"
  }
}
proc ftpfile {j} { fetch [expr $j % 4] 1000000 80 "ftpfile $j" }
for {set j 0} {$j < $webs} {incr j} { $ns at [expr 5.0 * $j / $webs] "page $j" }
for {set j 0} {$j < $ftps} {incr j} { $ns at [expr 0.5 * $j] "ftpfile $j" }
$ns at $dur "finish"
proc finish {} {
  global qm dur delays
  set arr [$qm set parrivals_]; set drp [$qm set pdrops_]; set dep [$qm set bdepartures_]
  set d [lsort -real $delays]; set n [llength $d]
  set med 0
  if {$n > 0} { set med [lindex $d [expr $n / 2]] }
  puts [format "pages %d median %.3f droprate %.3f util %.2f arrivals %d" $n $med [expr 100.0 * $drp / max($arr, 1)] [expr 100.0 * $dep * 8 / ($dur * 1.5e6)] $arr]
  exit 0
}
$ns run

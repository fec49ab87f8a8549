# RFC 2415's dumbbell in ns-2 2.35 with the FTP code the RFC's authors wrote:
# BayFullTcp with its FTP client and server (baytcp/ftpc.cc, ftps.cc), 1 MB
# files, IW 1 at the client and IW at the server, an 11-packet window,
# 1460-byte segments, every segment ACKed, 25-packet queues; no web clients.
# tests/test_rfc2415.py (test_one_ftp_file_takes_as_long_as_in_ns2s_baytcp)
# pins the time the first file's last byte reaches the client in this run:
#
#   ns rfc2415_ftp.tcl 1 1 30 trace.tr
#   awk '$1 == "r" && $4 == 2 && $11 == 998641' trace.tr | head -1
#
# (the segment carrying bytes 998,641-999,999 reaching client node 2: 7.630517 s).
#
# usage: ns rfc2415_ftp.tcl FTPS IW [DURATION] [TRACE_FILE]
# It prints the bottleneck's arrivals, drops, drop rate and utilization in the
# data direction (servers to clients).
set nftp [lindex $argv 0]; set iw [lindex $argv 1]
set dur 360.0
if {[llength $argv] > 2} { set dur [lindex $argv 2] }
set ns [new Simulator]
if {[llength $argv] > 3} { $ns trace-all [open [lindex $argv 3] w] }
Agent/TCP/BayFullTcp set segsize_ 1460
Agent/TCP/BayFullTcp set segsperack_ 1
Agent/TCP set window_ 11
Agent/TCP set packetSize_ 1460
source [file join [file dirname [info script]] rfc2415_dumbbell.tcl]
for {set j 0} {$j < $nftp} {incr j} {
  set k [expr $j % 4]
  set tcp [new Agent/TCP/BayFullTcp]; set snk [new Agent/TCP/BayFullTcp]
  $tcp set window_ 11; $snk set window_ 11
  $tcp set segsize_ 1460; $snk set segsize_ 1460
  $tcp initial-window 1; $snk initial-window $iw
  set cli [new Agent/BayTcpApp/FtpClient]
  $tcp attach-application $cli; $cli tcp $tcp
  set srv [new Agent/BayTcpApp/FtpServer]
  $srv file_size 1000000
  $snk attach-application $srv
  $ns attach-agent $c($k) $tcp; $ns attach-agent $s($k) $snk
  $ns connect $tcp $snk
  $snk listen
  $ns at [expr 0.5 * $j] "$cli start"
}
$ns at $dur "finish"
proc finish {} {
  global ns qm dur
  $ns flush-trace
  set arr [$qm set parrivals_]; set drp [$qm set pdrops_]; set dep [$qm set bdepartures_]
  puts [format "arrivals %d drops %d droprate %.3f%% util %.1f%%" $arr $drp [expr 100.0 * $drp / max($arr, 1)] [expr 100.0 * $dep * 8 / ($dur * 1.5e6)]]
  exit 0
}
$ns run

// The benchmark dumbbell (benchmarks/bench_dumbbell.py) in ns-3, for timing
// side by side with tcplab and ns-2. Written for this benchmark against ns-3's
// public API; compiled by bench_dumbbell.py against the headers and libraries
// of the PyPI wheel `ns3`.
//
//   ns3_dumbbell FLOWS RATE DURATION_S
//
// Sender i reaches r0 over 1 Gb/s with a 1 + (i mod 10) ms delay, r0->r1 is
// the bottleneck (RATE, 50 ms, a 100-packet DropTail device queue, no queue
// disc), r1 reaches receiver i over 1 Gb/s, 1 ms. Long-lived TCP NewReno bulk
// transfers of 1460-byte segments, initial window 1, windows up to 1000
// packets, minimum RTO 200 ms; flow i starts at 0.01 * i s. Prints
// "RESULT <packets departed on r0->r1> <wall seconds of Simulator::Run>".

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace ns3;

static uint64_t g_departed = 0;

static void
OnBottleneckTx(Ptr<const Packet>)
{
    ++g_departed;
}

int
main(int argc, char* argv[])
{
    if (argc != 4)
    {
        std::fprintf(stderr, "usage: %s FLOWS RATE DURATION_S\n", argv[0]);
        return 2;
    }
    const uint32_t flows = std::atoi(argv[1]);
    const std::string rate = argv[2];
    const double duration = std::atof(argv[3]);

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", StringValue("ns3::TcpNewReno"));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1460));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1000 * 1460 * 2));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1000 * 1460 * 2));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));

    NodeContainer routers;
    routers.Create(2);
    NodeContainer senders;
    senders.Create(flows);
    NodeContainer receivers;
    receivers.Create(flows);
    InternetStackHelper stack;
    stack.Install(routers);
    stack.Install(senders);
    stack.Install(receivers);

    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", StringValue(rate));
    bottleneck.SetChannelAttribute("Delay", StringValue("50ms"));
    bottleneck.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("100p"));
    NetDeviceContainer core = bottleneck.Install(routers.Get(0), routers.Get(1));

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue("1Gbps"));
    access.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("10000p"));

    // Address assignment installs a default queue disc; remove it, so that each
    // device's DropTail queue is the only queue.
    TrafficControlHelper tch;
    Ipv4AddressHelper addr;
    addr.SetBase("10.0.0.0", "255.255.255.252");
    addr.Assign(core);
    tch.Uninstall(core);
    addr.NewNetwork();

    std::vector<Ipv4Address> sinks;
    for (uint32_t i = 0; i < flows; ++i)
    {
        access.SetChannelAttribute("Delay", TimeValue(MilliSeconds(1 + i % 10)));
        NetDeviceContainer left = access.Install(senders.Get(i), routers.Get(0));
        addr.Assign(left);
        tch.Uninstall(left);
        addr.NewNetwork();
        access.SetChannelAttribute("Delay", StringValue("1ms"));
        NetDeviceContainer right = access.Install(routers.Get(1), receivers.Get(i));
        Ipv4InterfaceContainer r = addr.Assign(right);
        tch.Uninstall(right);
        addr.NewNetwork();
        sinks.push_back(r.GetAddress(1));
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    const uint16_t port = 5001;
    for (uint32_t i = 0; i < flows; ++i)
    {
        PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
        sink.Install(receivers.Get(i)).Start(Seconds(0));
        BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(sinks[i], port));
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        bulk.SetAttribute("SendSize", UintegerValue(1460));
        ApplicationContainer app = bulk.Install(senders.Get(i));
        app.Start(Seconds(0.01 * i));
    }
    core.Get(0)->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&OnBottleneckTx));

    Simulator::Stop(Seconds(duration));
    auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    double loop = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    Simulator::Destroy();
    std::printf("RESULT %llu %.6f\n", static_cast<unsigned long long>(g_departed), loop);
    return 0;
}

"""The whole scenario: ``[sim]`` and the tables of the other modules, the
checks that need all of it, and its normalization for the core."""

from __future__ import annotations

import itertools
import operator
from typing import Annotated, Any, Union

from pydantic import Field

#: RFC 7323 section 2.3: a window scale of at most 14.
MAX_SCALED_WINDOW = 65535 * 2**14
#: Most periodic samples of one connection a run may take (about 1.2 GB of trace rows).
MAX_SAMPLES = 10_000_000
#: Most connections a web application with a cycle may open in a run (the core's MAX_CYCLE_CONNECTIONS).
MAX_CYCLE_CONNECTIONS = 10_000_000

from .. import units
from ..errors import FieldProblem
from .apps import App, BulkApp, BurstApp, RepeatApp, WebApp, core_app
from .fields import DurationOrNone, Int, _above_zero, _fmt_amount, _Model
from .instrument import Loss, Trace
from .tcp import Tcp, _core_tcp, _window_bytes
from .topology import Dumbbell, Explicit, LinkTable, Topology, Wireless, _core_topology

# ---------------------------------------------------------------- [sim]


class Sim(_Model):
    duration: Annotated[DurationOrNone, _above_zero("must be above 0s, or 'none' (until every transfer completes)")] = "none"
    """Stop time. ``"none"``: run until every transfer completes."""
    seed: Annotated[Int, Field(ge=0, le=2**64 - 1)] = 1
    until: list[str] = []
    """Stop as soon as these applications have finished (each of their
    transfers, or pages, completed), or at ``duration``, whichever is first."""


# ---------------------------------------------------------------- the scenario


def _node_name_problem(name: str) -> str | None:
    """What makes `name` unusable as a node's name, if anything: links are
    named `from->to`, and captures are files named `from-to.pcap`."""
    if not name.strip():
        return "a node needs a name"
    if "->" in name:
        return "'->' joins the two nodes of a link's name (r0->r1), so a node's name cannot hold it"
    if any(c in name for c in "/\\") or not name.isprintable():
        return "a node's name is part of its links' capture file names (from-to.pcap): no '/', '\\' or control characters"
    return None


class Scenario(_Model):
    # Built in code, its applications may set copies, as a file's do (loading.expand_copies).
    __expands_copies__ = True

    sim: Sim = {}  # type: ignore[assignment]
    topology: Topology
    tcp: Tcp = {}  # type: ignore[assignment]
    apps: Annotated[list[App], Field(min_length=1)]
    losses: list[Loss] = []
    trace: Trace = {}  # type: ignore[assignment]

    def node_names(self) -> list[str]:
        t = self.topology
        return t.nodes() if isinstance(t, (Dumbbell, Wireless)) else t.node_list()

    def app_name(self, i: int) -> str:
        return self.apps[i].name or f"app{i}"

    def app_names(self) -> list[str]:
        """Every application's name, appN where it has none (by a C-level
        map: this runs at set-up over 100,000 applications)."""
        names = list(map(_NAME, self.apps))
        if None in names or "" in names:
            names = [n or f"app{i}" for i, n in enumerate(names)]
        return names

    # -- semantic checks that need the whole scenario
    def problems(self) -> list[FieldProblem]:
        out: list[FieldProblem] = []
        nodes = self.node_names()
        known = set(nodes)
        allowed = _short_list(nodes)
        t = self.topology
        if isinstance(t, Explicit):
            seen: set[str] = set()
            for i, n in enumerate(t.nodes):
                if n in seen:
                    out.append(FieldProblem(f"topology.nodes[{i}]", "node declared twice", n, True))
                elif bad := _node_name_problem(n):
                    out.append(FieldProblem(f"topology.nodes[{i}]", bad, n, True))
                seen.add(n)
            made: dict[tuple[str, str], str] = {}  # each direction made so far: by which link
            for i, link in enumerate(t.links):
                for attr, key in (("src", "from"), ("dst", "to")):
                    v = getattr(link, attr)
                    if v not in known:
                        out.append(FieldProblem(f"topology.links[{i}].{key}", f"unknown node; allowed: {allowed}", v, True))
                if link.src == link.dst:
                    out.append(FieldProblem(f"topology.links[{i}].to", "a link must join two different nodes", link.dst, True))
                    continue
                # A direction made twice: routes took the first, and the
                # second's rate, delay and queue went unused without a word.
                for a, b, how in ((link.src, link.dst, f"links[{i}]"), (link.dst, link.src, f"links[{i}] (duplex)"))[: 1 + link.duplex]:
                    if (a, b) in made:
                        hint = (f"set {made[a, b].split()[0]}.reverse for that direction's settings, or duplex = false there"
                                if made[a, b].endswith("(duplex)") else "give each direction once")
                        out.append(FieldProblem(f"topology.links[{i}]", f"{a}->{b} again: {made[a, b]} makes it already; a link is named "
                                                f"by its two nodes, so {hint}"))  # fmt: skip
                    made.setdefault((a, b), how)
        topology_ok = not out  # else its links cannot be named, and the checks that name them wait for a sound topology
        out += self._app_problems(known, allowed)
        return self._more_problems(out, topology_ok)

    def _app_problems(self, known: set[str], allowed: str) -> list[FieldProblem]:
        apps = self.apps
        # A quick pass over every application finds most scenarios sound;
        # only otherwise does each application get its own checks and messages.
        # C-level maps over the applications, not comprehensions: this pass
        # is a noticeable part of set-up with 100,000 applications.
        srcs = list(map(_SRC, apps))
        dsts = list(map(_DST, apps))
        kinds = set(map(type, apps))
        extra = [(a.dst, s) for a in apps if type(a) is BurstApp for s in a.extra_src] if BurstApp in kinds else []  # a burst's more servers
        names = self.app_names()
        tcps = list(map(_TCP, apps))
        sound = (
            known.issuperset(srcs) and known.issuperset(dsts) and all(map(str.__ne__, srcs, dsts))
            and all(s in known and s != d for d, s in extra)
            and len(set(names)) == len(names) and not any(t.model_fields_set for t in dict(zip(map(id, tcps), tcps)).values())
            and self.sim.duration is not None
        )  # fmt: skip
        if sound:
            return self._tcp_problems(0, self.tcp, apps[0])
        out: list[FieldProblem] = []
        names_seen: dict[str, int] = {}
        shared_checked: list[FieldProblem] | None = None  # the checks of the shared [tcp], made once
        retry_named = False  # the shared [tcp]'s max_retries named once
        endless: list[int] = []  # the applications that never end, named in one problem
        endless_at = 0
        for i, a in enumerate(apps):
            for attr in ("src", "dst"):
                v = getattr(a, attr)
                if v not in known:
                    out.append(FieldProblem(f"apps[{i}].{attr}", f"unknown node; allowed: {allowed}", v, True))
            if a.src == a.dst:
                out.append(FieldProblem(f"apps[{i}].dst", "must differ from src", a.dst, True))
            for j, s in enumerate(getattr(a, "extra_src", ())):
                if s not in known:
                    out.append(FieldProblem(f"apps[{i}].extra_src[{j}]", f"unknown node; allowed: {allowed}", s, True))
                elif s == a.dst:
                    out.append(FieldProblem(f"apps[{i}].extra_src[{j}]", "must differ from dst", s, True))
            name = names[i]
            if name in names_seen:
                out.append(FieldProblem(f"apps[{i}].name", f"already used by apps[{names_seen[name]}]; names must be unique", name, True))
            names_seen[name] = i
            if a.tcp.model_fields_set:
                out += self._tcp_problems(i, self.tcp_for(i), a)
            elif shared_checked is None:
                shared_checked = self._tcp_problems(i, self.tcp, a)
                out += shared_checked
            if self.sim.duration is None:
                if _endless(a):
                    endless_at = endless_at if endless else len(out)
                    endless.append(i)
                # A connection that can never deliver would retransmit for
                # ever and the run never end (the core stops it at 10^8 s,
                # which a tiny RTO takes for ever to reach).
                own = "max_retries" in a.tcp.model_fields_set
                if self.tcp_for(i).max_retries is None and (own or not retry_named):
                    field = f"apps[{i}].tcp.max_retries" if own else "tcp.max_retries"
                    retry_named = retry_named or not own
                    out.append(FieldProblem(field, "never giving up, with sim.duration = 'none' (until every transfer completes), keeps the run "
                                            "going for ever if a transfer can never get through: give a duration, or a number of "
                                            "retransmissions", "none", True))  # fmt: skip
        if endless:
            out.insert(endless_at, FieldProblem("sim.duration", f"is 'none' but {_listing(endless)} never end"
                                                f"{'s' if len(endless) == 1 else ''}; set a duration such as '60s'"))
        return out

    def _until_problems(self) -> list[FieldProblem]:
        out = []
        if self.sim.duration is None:
            out.append(FieldProblem("sim.until", "needs sim.duration, the longest the run may last if they never finish (a transfer that "
                                    "never gets through would keep it going for ever)", list(self.sim.until), True))  # fmt: skip
        if self.trace.pcap:
            out.append(FieldProblem("trace.pcap", "cannot be written in a run that sim.until stops (a capture is written as packets are "
                                    "queued, with the time each will go out, and such a run has no stop time to hold them back at): "
                                    "give the run a fixed duration", list(self.trace.pcap), True))  # fmt: skip
        names = self.app_names()
        index = dict(zip(names, range(len(names))))
        for k, name in enumerate(self.sim.until):
            i = index.get(name)
            if i is None:
                out.append(FieldProblem(f"sim.until[{k}]", f"unknown application; allowed: {_short_list(names)}", name, True))
                continue
            a = self.apps[i]
            if _endless(a):
                what = "size" if isinstance(a, BulkApp) else "count" if isinstance(a, RepeatApp) else "pages"
                out.append(FieldProblem(f"sim.until[{k}]", f"apps[{i}] never finishes: give it a {what}, or leave it out of sim.until", name, True))
        return out

    def _more_problems(self, out: list[FieldProblem], topology_ok: bool) -> list[FieldProblem]:
        stop = self.sim.duration
        every = self.trace.interval
        if every is not None and stop is not None and stop // every > MAX_SAMPLES:
            # A sample per interval of every traced connection while it is open:
            # a nanosecond's interval over seconds would fill the memory.
            out.append(FieldProblem("trace.interval", f"takes up to {stop // every:,} samples of each traced connection by the stop at "
                                    f"{units.format_duration(stop)}; at most {MAX_SAMPLES:,} are allowed: sample less often, or run less long",
                                    units.format_duration(every), True))  # fmt: skip
        for i, a in enumerate(self.apps if WebApp in set(map(type, self.apps)) else ()):
            if type(a) is WebApp and a.cycle is not None and not a.persistent:
                # Page k starts no earlier than start + k x cycle, whatever the
                # network does: a short cycle would open connections enough to
                # fill the memory. The core refuses the same.
                n = a.pages
                if stop is not None:
                    reach = (stop - a.start[0]) // a.cycle + 1 if a.start[0] <= stop else 0
                    n = reach if n is None else min(n, max(reach, 1))
                per_page = 1 if a.http == "1.1" else 1 + a.embedded
                if n is not None and n * per_page > MAX_CYCLE_CONNECTIONS:
                    by = f" by the stop at {units.format_duration(stop)}" if stop is not None else ""
                    out.append(FieldProblem(f"apps[{i}].cycle", f"opens {n:,} pages of {per_page} connection{'s' if per_page > 1 else ''}{by}; "
                                            f"at most {MAX_CYCLE_CONNECTIONS:,} connections are allowed per application, as for a burst's flows",
                                            units.format_duration(a.cycle), True))  # fmt: skip
        # Link names only matter to loss rules and the packet log; a topology
        # with problems of its own (reported) has no list of links to check them by.
        if topology_ok and (self.losses or self.trace.links or self.trace.pcap):
            links = self.link_names()
            listed = [("trace.links", self.trace.links), ("trace.pcap", self.trace.pcap)]
            for where, names in [(f"losses[{i}].link", [l.link]) for i, l in enumerate(self.losses)] + listed:
                for k, name in enumerate(names):
                    if name not in links:
                        f = f"{where}[{k}]" if where.startswith("trace.") else where
                        out.append(FieldProblem(f, f"no such link; links: {_short_list(sorted(links))}", name, True))
        app_names = self.app_names() if self.losses or self.trace.apps else []
        for i, l in enumerate(self.losses):
            if l.app is not None and l.app not in app_names:
                out.append(FieldProblem(f"losses[{i}].app", f"unknown application; allowed: {_short_list(app_names)}", l.app, True))
            if not l.packets and l.rate == 0.0:
                out.append(FieldProblem(f"losses[{i}]", "drops nothing: give packets = [...] or a rate"))
            first: dict[int, int] = {}
            for k, n in enumerate(l.packets):
                # The rule drops the n-th packet once however often n is listed:
                # [20, 20] for [20, 21] dropped one packet, not two.
                if first.setdefault(n, k) != k:
                    out.append(FieldProblem(f"losses[{i}].packets[{k}]", f"listed already, as packets[{first[n]}]: a packet is dropped once; "
                                            "give each number once", n, True))  # fmt: skip
            if l.kind in ("syn", "synack", "request", "close"):
                # Packets of the handshake: only applications with tcp.handshake send them.
                whose = [k for k in range(len(self.apps)) if l.app is None or app_names[k] == l.app]
                if whose and not any(self.tcp_for(k).handshake for k in whose):
                    who = f"application {l.app!r} sends no" if l.app is not None else "no application sends"
                    out.append(FieldProblem(f"losses[{i}].kind", f"{who} such packets: they come with tcp.handshake, which is off"
                                            f"{' for it' if l.app is not None else ''}", l.kind, True))
        if self.sim.until:
            out += self._until_problems()
        for k, name in enumerate(self.trace.apps):
            if name not in app_names:
                out.append(FieldProblem(f"trace.apps[{k}]", f"unknown application; allowed: {_short_list(app_names)}", name, True))
        # A global field checked for every application is reported once.
        seen: set[tuple[str, str, str]] = set()
        unique = []
        for p in out:
            key = (p.field, p.message, repr(p.value))
            if key not in seen:
                seen.add(key)
                unique.append(p)
        return unique

    def _tcp_problems(self, i: int, tcp: Tcp, a: Any) -> list[FieldProblem]:
        """The checks of one application's TCP settings (`a.tcp` names its overrides)."""
        out: list[FieldProblem] = []
        if tcp.iw[0] == "bytes" and tcp.iw[1] < tcp.mss:
            # A window below one segment never lets the sender send.
            where = f"apps[{i}].tcp.iw" if a.tcp.iw is not None else "tcp.iw"
            out.append(FieldProblem(where, f"is below one segment (mss = {tcp.mss} bytes), so nothing could be sent; give at least "
                                    f"{tcp.mss}B, or a count of segments such as 1", f"{tcp.iw[1]}B", True))  # fmt: skip
        if tcp.rto_min > tcp.rto_max:
            out.append(FieldProblem(f"apps[{i}].tcp.rto_min" if a.tcp.rto_min is not None else "tcp.rto_min", "must not exceed rto_max", units.format_duration(tcp.rto_min), True))
        if tcp.clock_phase is not None and tcp.clock_phase >= tcp.clock_granularity:
            where = f"apps[{i}].tcp.clock_phase" if a.tcp.clock_phase is not None else "tcp.clock_phase"
            out.append(FieldProblem(where, f"must be less than clock_granularity ({units.format_duration(tcp.clock_granularity)}), or 'random'",
                                    units.format_duration(tcp.clock_phase), True))  # fmt: skip
        if not tcp.window_scaling and _window_bytes(tcp.window, tcp.mss) > 65535:
            where = f"apps[{i}].tcp.window" if a.tcp.window is not None else "tcp.window"
            out.append(FieldProblem(where, f"is {_window_bytes(tcp.window, tcp.mss)} bytes, above 65535 without window scaling; set tcp.window_scaling = true or a window up to 64KiB", _fmt_amount(tcp.window), True))
        if tcp.mss + tcp.header > 65535:
            where = f"apps[{i}].tcp.mss" if a.tcp.mss is not None else "tcp.mss"
            out.append(FieldProblem(where, f"a segment of mss + header = {tcp.mss + tcp.header} bytes does not fit the largest IPv4 packet (65535 bytes)", units.format_size(tcp.mss), True))
        if tcp.window_scaling and _window_bytes(tcp.window, tcp.mss) > MAX_SCALED_WINDOW:
            where = f"apps[{i}].tcp.window" if a.tcp.window is not None else "tcp.window"
            out.append(FieldProblem(where, f"is {_window_bytes(tcp.window, tcp.mss)} bytes, above {MAX_SCALED_WINDOW} (65535 x 2^14), the largest window RFC 7323's scale 14 allows", _fmt_amount(tcp.window), True))
        if _window_bytes(tcp.window, tcp.mss) < tcp.mss:
            out.append(FieldProblem("tcp.window", f"must hold at least one segment of mss = {tcp.mss} bytes", _fmt_amount(tcp.window), True))
        if tcp.send_jitter and tcp.local_congestion != "none":
            # Held-back segments are not yet in the interface queue whose room a send stall reads.
            where = f"apps[{i}].tcp.send_jitter" if a.tcp.send_jitter is not None else "tcp.send_jitter"
            out.append(FieldProblem(where, "holds segments back before the interface queue whose room local_congestion = 'linux' reads; use one "
                                    "or the other", units.format_duration(tcp.send_jitter), True))  # fmt: skip
        return out

    def link_names(self) -> set[str]:
        return _core_topology(self.topology).names()

    def tcp_for(self, i: int) -> Tcp:
        t = self.apps[i].tcp
        if not t.model_fields_set:
            return self.tcp
        over = {k: getattr(t, k) for k in t.model_fields_set}  # None is a value here: see TcpOverride
        return self.tcp.model_copy(update=over) if over else self.tcp

    def to_core(self, pcap_dir: str | None = None, packed: bool = False) -> dict[str, Any]:
        """The normalized scenario for the core (see crates/tcplab-core/src/scenario.rs).
        `pcap_dir`: the existing directory that ``trace.pcap``'s captures go to.

        `packed`: the compact form of the same scenario, for large ones: links
        and applications as columns of indices (applications share templates
        of everything but their name and nodes), and the shared TCP settings
        given once. The plain form is what sweeps hash into run ids, so it
        stays as it is."""
        lt = _core_topology(self.topology)
        shared = _core_tcp(self.tcp)  # for every application without its own TCP settings
        if packed:
            return self._packed(lt, shared, pcap_dir)
        apps = []
        for i, a in enumerate(self.apps):
            t = self.tcp_for(i)
            apps.append({"name": self.app_name(i), **core_app(a), "tcp": dict(shared) if t is self.tcp else _core_tcp(t)})
        return self._core_doc(lt.nodes, {"links": lt.dicts(), "apps": apps}, pcap_dir)

    def _packed(self, lt: LinkTable, shared: dict[str, Any], pcap_dir: str | None) -> dict[str, Any]:
        apps = self.apps
        index = lt.index.__getitem__
        # Neighbours equal in every setting but name and nodes (such as the
        # copies scenario loading makes of like applications) share a
        # template. The columns are built by C-level maps over the
        # applications' attribute dictionaries: with 100,000 applications a
        # Python loop over them costs a noticeable part of set-up.
        dicts = list(map(operator.attrgetter("__dict__"), apps))
        kinds = list(map(type, apps))
        getters = {k: operator.itemgetter(*[f for f in k.model_fields if f not in _IDENTITY]) for k in set(kinds)}
        if len(getters) == 1:
            rests = list(map(next(iter(getters.values())), dicts))
        else:
            rests = [getters[k](d) for k, d in zip(kinds, dicts)]
        # A run of like neighbours ends at a new kind, or at other settings.
        starts = runs_of_equal(list(zip(kinds, rests)))
        templates: list[dict[str, Any]] = []
        which: list[int] = []
        for k, (i, end) in enumerate(zip(starts, starts[1:])):
            a, t = apps[i], self.tcp_for(i)
            tmpl = core_app(a)
            del tmpl["src"], tmpl["dst"]
            if t is not self.tcp:
                tmpl["tcp"] = _core_tcp(t)
            templates.append(tmpl)
            which += [k] * (end - i)
        names = self.app_names()
        srcs = list(map(index, map(operator.itemgetter("src"), dicts)))
        dsts = list(map(index, map(operator.itemgetter("dst"), dicts)))
        body = {
            "link_columns": lt.packed(), "queues": lt.queues, "tcp": shared,
            "app_columns": {"name": names, "src": srcs, "dst": dsts, "template": which}, "app_templates": templates,
        }  # fmt: skip
        return self._core_doc(lt.nodes, body, pcap_dir)

    def _core_doc(self, nodes: list[str], body: dict[str, Any], pcap_dir: str | None) -> dict[str, Any]:
        losses = []
        for loss in self.losses:
            a, b = loss.link.split("->")
            losses.append({"from": a, "to": b, "app": loss.app, "kind": loss.kind, "nth": list(loss.packets), "rate": loss.rate or None})
        tr = self.trace
        trace = {
            "interval_ns": tr.interval_ns(),
            "on_change": tr.on_change,
            "apps": list(tr.apps),
            "links": [name.split("->") for name in tr.links],
        }
        if tr.web100:
            trace["web100"] = True
        if tr.pcap:
            trace["pcap"] = [name.split("->") for name in tr.pcap]
            trace["pcap_dir"] = pcap_dir
        until = {"until": list(self.sim.until)} if self.sim.until else {}  # absent when empty, so run ids stay as they were
        return {"seed": self.sim.seed, "stop_ns": self.sim.duration, **until, "nodes": nodes, **body, "losses": losses, "trace": trace}


def _listing(apps: list[int], shown: int = 3) -> str:
    """'apps[0]', 'apps[0] and apps[4]', 'apps[0], apps[1], apps[2] and 97 more'."""
    names = [f"apps[{i}]" for i in apps[:shown]]
    if len(apps) > shown:
        return f"{', '.join(names)} and {len(apps) - shown} more"
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _endless(a: App) -> bool:
    """Whether an application goes on for as long as the run: an unbounded
    bulk transfer, or repeats or pages without a count."""
    return (isinstance(a, BulkApp) and a.size is None) or (isinstance(a, (RepeatApp, WebApp)) and getattr(a, "count", getattr(a, "pages", None)) is None)


#: What tells like applications apart.
_IDENTITY = ("name", "src", "dst")


def runs_of_equal(values: list[Any]) -> list[int]:
    """Where each run of equal neighbours in `values` starts, then len(values):
    by C-level maps, for lists of 100,000 applications (a generator over the
    pairs took about 40 ms a call there)."""
    return [0, *itertools.compress(range(1, len(values)), map(operator.ne, values, values[1:])), len(values)]


_NAME, _SRC, _DST, _TCP = map(operator.attrgetter, ("name", "src", "dst", "tcp"))


def _short_list(names: list[str], most: int = 12) -> str:
    if len(names) <= most:
        return ", ".join(names)
    return ", ".join(names[: most - 2]) + f", ... , {names[-1]} ({len(names)} nodes)"


//! Static shortest-path routing, computed once when the simulation is built.
//!
//! Paths minimise the hop count (every link costs one, as in ns-2's static
//! routing); among equal-length paths the one taking the lowest-numbered link
//! at each hop wins, so routes depend only on the topology's declaration
//! order. A route is a list of link indices that packets carry by reference.

use std::collections::HashMap;
use std::collections::VecDeque;

/// Hop distances to one node, and each node's next link toward it.
struct Tree {
    dist: Vec<u32>,
    /// The lowest-numbered link to a neighbour one hop closer (`u32::MAX`: none).
    next: Vec<u32>,
}

/// Routes from every node to the nodes asked for.
///
/// A host hanging off one node (all its links, in and out, join that one
/// node: a stub) is reached through that node, so one tree per non-stub
/// node asked for serves every stub behind it: on a dumbbell of N hosts, two
/// trees of N entries each, not N. Paths are the same as with a tree per
/// destination: the hop count to a stub is one more than to its node, and
/// at every hop the lowest-numbered link that makes progress is taken.
pub struct Router {
    n: usize,
    /// Outgoing links per node, as (link index, far node), in link order.
    out: Adjacency,
    /// Incoming links per node, as (link index, near node), in link order.
    inc: Adjacency,
    /// The far node of each link.
    to: Vec<u32>,
    /// For a stub, the node it hangs off and the first link from there to it.
    stub: Vec<Option<(u32, u32)>>,
    trees: HashMap<u32, Tree>,
}

/// Each node's links as one flat list, the nodes' lists one after another
/// (compressed rows): two allocations for any number of nodes, where a list
/// per node made 200,000 small ones for a 100,000-flow dumbbell.
struct Adjacency {
    /// Node v's entries are `items[start[v]..start[v + 1]]`.
    start: Vec<u32>,
    items: Vec<(u32, u32)>,
}

impl Adjacency {
    /// Entry (link index, `other(link)`) under node `key(link)` for every
    /// link, each node's entries in link order.
    fn new(n_nodes: usize, links: &[(u32, u32)], key: impl Fn((u32, u32)) -> u32, other: impl Fn((u32, u32)) -> u32) -> Adjacency {
        let mut start = vec![0u32; n_nodes + 1];
        for &l in links {
            start[key(l) as usize + 1] += 1;
        }
        for v in 0..n_nodes {
            start[v + 1] += start[v];
        }
        let mut fill = start.clone();
        let mut items = vec![(0u32, 0u32); links.len()];
        for (i, &l) in links.iter().enumerate() {
            let at = &mut fill[key(l) as usize];
            items[*at as usize] = (i as u32, other(l));
            *at += 1;
        }
        Adjacency { start, items }
    }

    fn of(&self, v: usize) -> &[(u32, u32)] {
        &self.items[self.start[v] as usize..self.start[v + 1] as usize]
    }
}

impl Router {
    pub fn new(n_nodes: usize, links: &[(u32, u32)]) -> Router {
        let out = Adjacency::new(n_nodes, links, |(a, _)| a, |(_, b)| b);
        let inc = Adjacency::new(n_nodes, links, |(_, b)| b, |(a, _)| a);
        let stub = (0..n_nodes)
            .map(|v| {
                // The first link into v is the lowest-numbered one from r.
                let &(link, r) = inc.of(v).first()?;
                let only_r = inc.of(v).iter().all(|&(_, a)| a == r) && out.of(v).iter().all(|&(_, b)| b == r);
                (only_r && r as usize != v).then_some((r, link))
            })
            .collect();
        let to = links.iter().map(|&(_, b)| b).collect();
        Router { n: n_nodes, out, inc, to, stub, trees: HashMap::new() }
    }

    /// Distance vectors and next-link tables stored, in entries (two per node per tree).
    pub fn stored_entries(&self) -> usize {
        self.trees.values().map(|t| t.dist.len() + t.next.len()).sum()
    }

    fn tree(&mut self, root: u32) -> &Tree {
        let (n, inc, out) = (self.n, &self.inc, &self.out);
        self.trees.entry(root).or_insert_with(|| {
            let mut dist = vec![u32::MAX; n];
            dist[root as usize] = 0;
            let mut q = VecDeque::from([root]);
            while let Some(v) = q.pop_front() {
                for &(_, u) in inc.of(v as usize) {
                    if dist[u as usize] == u32::MAX {
                        dist[u as usize] = dist[v as usize] + 1;
                        q.push_back(u);
                    }
                }
            }
            let next = (0..n)
                .map(|v| {
                    let closer = |&&(_, b): &&(u32, u32)| dist[b as usize].checked_add(1) == Some(dist[v]);
                    out.of(v).iter().find(closer).map_or(u32::MAX, |&(l, _)| l)
                })
                .collect();
            Tree { dist, next }
        })
    }

    /// The links from `src` to `dst`, or `None` if `dst` is unreachable.
    pub fn path(&mut self, src: u32, dst: u32) -> Option<Vec<u32>> {
        let mut path = Vec::new();
        self.path_into(src, dst, &mut path).then_some(path)
    }

    /// As [`Router::path`], into `path` (cleared first), so that building
    /// every route of a large scenario reuses one buffer; false if `dst` is
    /// unreachable.
    pub fn path_into(&mut self, src: u32, dst: u32, path: &mut Vec<u32>) -> bool {
        path.clear();
        if src == dst {
            return true;
        }
        // A stub is reached through its node, unless the path starts there.
        let (root, last) = match self.stub[dst as usize] {
            Some((r, link)) => (r, Some(link)),
            None => (dst, None),
        };
        self.tree(root);
        let (t, to) = (&self.trees[&root], &self.to);
        if t.dist[src as usize] == u32::MAX {
            return false;
        }
        let mut at = src;
        while at != root {
            let link = t.next[at as usize];
            path.push(link);
            at = to[link as usize];
        }
        path.extend(last);
        true
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adjacency_lists_each_nodes_links_in_link_order() {
        // Node 3 has no links; node 0 is the source of links 0, 2 and 4.
        let links = [(0, 1), (1, 0), (0, 2), (2, 1), (0, 1)];
        let out = Adjacency::new(4, &links, |(a, _)| a, |(_, b)| b);
        let inc = Adjacency::new(4, &links, |(_, b)| b, |(a, _)| a);
        assert_eq!(out.of(0), &[(0, 1), (2, 2), (4, 1)]);
        assert_eq!(out.of(1), &[(1, 0)]);
        assert_eq!(out.of(2), &[(3, 1)]);
        assert_eq!(out.of(3), &[]);
        assert_eq!(inc.of(1), &[(0, 0), (3, 2), (4, 0)]);
        assert_eq!(inc.of(0), &[(1, 1)]);
        assert_eq!(inc.of(3), &[]);
    }

    #[test]
    fn shortest_then_lowest_link() {
        // 0 -> 1 -> 3 and 0 -> 2 -> 3 have equal length; 0 -> 3 through 4 is longer.
        let links = [(0, 2), (0, 1), (1, 3), (2, 3), (0, 4), (4, 5), (5, 3)];
        let mut r = Router::new(6, &links);
        assert_eq!(r.path(0, 3), Some(vec![0, 3]));
        assert_eq!(r.path(3, 0), None);
        assert_eq!(r.path(4, 3), Some(vec![5, 6]));
        assert_eq!(r.path(2, 2), Some(vec![]));
    }

    #[test]
    fn stubs_share_their_nodes_tree() {
        // A dumbbell: hosts 2..5 on node 0, hosts 6..9 on node 1, declared
        // host by host in both directions, then 0 <-> 1.
        let mut links = Vec::new();
        for h in 2..6 {
            links.extend([(h, 0), (0, h)]);
        }
        for h in 6..10 {
            links.extend([(1, h), (h, 1)]);
        }
        links.extend([(0, 1), (1, 0)]);
        let mut r = Router::new(10, &links);
        assert_eq!(r.path(2, 6), Some(vec![0, 16, 8]));
        assert_eq!(r.path(9, 3), Some(vec![15, 17, 3]));
        assert_eq!(r.path(0, 7), Some(vec![16, 10]));
        assert_eq!(r.path(4, 5), Some(vec![4, 7]));
        // Every path above used two trees (nodes 0 and 1), not one per host.
        assert_eq!(r.stored_entries(), 2 * 2 * 10);
    }

    #[test]
    fn a_dumbbell_of_20000_hosts_stores_two_trees() {
        // 10,000 hosts a side, one route each way per pair: the routes' own
        // entries grow with the pairs, the trees with the nodes, nothing with
        // their product (a tree per destination would store 2 x 20,002 x 20,000).
        let side = 10_000u32;
        let n = 2 * side + 2;
        let (r0, r1) = (2 * side, 2 * side + 1);
        let mut links = Vec::new();
        for h in 0..side {
            links.extend([(h, r0), (r0, h)]);
        }
        for h in side..2 * side {
            links.extend([(r1, h), (h, r1)]);
        }
        links.extend([(r0, r1), (r1, r0)]);
        let mut r = Router::new(n as usize, &links);
        let mut route_entries = 0;
        for h in 0..side {
            route_entries += r.path(h, side + h).unwrap().len() + r.path(side + h, h).unwrap().len();
        }
        assert_eq!(route_entries, 2 * 3 * side as usize);
        assert_eq!(r.stored_entries(), 2 * 2 * n as usize);
    }

    #[test]
    fn the_same_paths_as_a_tree_per_destination() {
        // A small mesh with stubs and parallel links: compare with a plain
        // BFS per destination and the lowest-link rule.
        let links = [(0, 1), (1, 0), (1, 2), (2, 1), (0, 2), (2, 0), (2, 3), (3, 2), (2, 3), (1, 4), (4, 1), (0, 5), (5, 0), (4, 6), (6, 4), (5, 6), (6, 5)];
        let n = 7;
        let mut r = Router::new(n, &links);
        for dst in 0..n as u32 {
            let mut d = vec![u32::MAX; n];
            d[dst as usize] = 0;
            let mut q = VecDeque::from([dst]);
            while let Some(v) = q.pop_front() {
                for &(a, b) in &links {
                    if b == v && d[a as usize] == u32::MAX {
                        d[a as usize] = d[v as usize] + 1;
                        q.push_back(a);
                    }
                }
            }
            for src in 0..n as u32 {
                let want = (d[src as usize] != u32::MAX).then(|| {
                    let mut p = Vec::new();
                    let mut at = src;
                    while at != dst {
                        let (l, &(_, b)) = links.iter().enumerate().find(|&(_, &(a, b))| a == at && d[b as usize].checked_add(1) == Some(d[at as usize])).unwrap();
                        p.push(l as u32);
                        at = b;
                    }
                    p
                });
                assert_eq!(r.path(src, dst), want, "{src} -> {dst}");
            }
        }
    }

    #[test]
    fn a_neighbour_that_cannot_reach_the_destination_is_skipped() {
        // Found by the scenario_build fuzz target: node 2 cannot reach node 1,
        // and its unreachable distance (u32::MAX) plus one overflowed.
        let mut r = Router::new(3, &[(0, 2), (0, 1)]);
        assert_eq!(r.path(0, 1), Some(vec![1]));
    }

    #[test]
    fn the_fuzzers_scenario_builds_or_is_refused() {
        let text = include_str!("../../../../fuzz/regressions/scenario_build-unreachable-neighbour.json");
        if let Ok(sc) = crate::scenario::Scenario::from_json(text) {
            let _ = crate::Simulator::new(&sc);
        }
    }
}

/// What sending a packet needs of its route: the first link and the
/// route's length. A connection keeps its two routes' heads, so that a send
/// reads no route entry (at scale an entry is a cache miss; the connection
/// is in cache by then).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RouteHead {
    pub first: u32,
    pub hops: u16,
}

impl RouteHead {
    /// A connection's heads before the network has set them (no route).
    pub const NONE: RouteHead = RouteHead { first: u32::MAX, hops: 0 };
}

/// Every route of a run in one array: each route is its length, then its
/// links. Its handle (the `route` a packet carries) is where it starts, so a
/// packet's next link is one read away, in the line its length sits in.
#[derive(Debug, Default)]
pub struct Routes {
    flat: Vec<u32>,
    starts: Vec<u32>,
}

impl Routes {
    /// Add a route (at least one link); return its handle.
    pub fn push(&mut self, path: &[u32]) -> u32 {
        assert!(!path.is_empty(), "a route has at least one link");
        let h = u32::try_from(self.flat.len()).expect("routes fit 2^32 entries");
        self.flat.push(path.len() as u32);
        self.flat.extend_from_slice(path);
        self.starts.push(h);
        h
    }

    /// Route `r`'s first link and length.
    pub fn head(&self, r: u32) -> RouteHead {
        let links = self.get(r);
        // At most u16::MAX links: checked at build.
        RouteHead { first: links[0], hops: links.len() as u16 }
    }

    /// Where route `r`'s entry is (a prefetch hint; any `r` is harmless).
    #[inline]
    pub fn entry_ptr(&self, r: u32) -> *const u32 {
        self.flat.as_ptr().wrapping_add(r as usize)
    }

    /// The links of route `r`.
    #[inline]
    pub fn get(&self, r: u32) -> &[u32] {
        let r = r as usize;
        &self.flat[r + 1..=r + self.flat[r] as usize]
    }

    /// Every route's entry, one after another: its length, then its links.
    #[inline]
    pub fn flat(&self) -> &[u32] {
        &self.flat
    }

    /// Every route, in the order added.
    pub fn iter(&self) -> impl Iterator<Item = &[u32]> + '_ {
        self.starts.iter().map(|&h| self.get(h))
    }
}

#[cfg(test)]
mod route_table_tests {
    use super::Routes;

    #[test]
    fn handles_find_their_links() {
        let mut r = Routes::default();
        let a = r.push(&[4, 2, 7]);
        let b = r.push(&[1]);
        assert_eq!((a, b), (0, 4));
        assert_eq!(r.get(a), &[4, 2, 7]);
        assert_eq!(r.get(b), &[1]);
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![&[4, 2, 7][..], &[1][..]]);
    }
}

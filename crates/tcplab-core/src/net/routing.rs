//! Static shortest-path routing, computed once when the simulation is built.
//!
//! Paths minimise the hop count (every link costs one, as in ns-2's static
//! routing); among equal-length paths the one taking the lowest-numbered link
//! at each hop wins, so routes depend only on the topology's declaration
//! order. A route is a list of link indices that packets carry by reference.

use std::collections::HashMap;
use std::collections::VecDeque;

pub struct Router {
    n: usize,
    /// Outgoing links per node, as (link index, far node), in link order.
    out: Vec<Vec<(u32, u32)>>,
    /// Incoming links per node, as (near node).
    inc: Vec<Vec<u32>>,
    /// Hop distances to each destination asked for so far.
    dist_to: HashMap<u32, Vec<u32>>,
}

impl Router {
    pub fn new(n_nodes: usize, links: &[(u32, u32)]) -> Router {
        let mut out = vec![Vec::new(); n_nodes];
        let mut inc = vec![Vec::new(); n_nodes];
        for (i, &(a, b)) in links.iter().enumerate() {
            out[a as usize].push((i as u32, b));
            inc[b as usize].push(a);
        }
        Router { n: n_nodes, out, inc, dist_to: HashMap::new() }
    }

    fn distances(&mut self, dst: u32) -> &Vec<u32> {
        let (n, inc) = (self.n, &self.inc);
        self.dist_to.entry(dst).or_insert_with(|| {
            let mut d = vec![u32::MAX; n];
            d[dst as usize] = 0;
            let mut q = VecDeque::from([dst]);
            while let Some(v) = q.pop_front() {
                for &u in &inc[v as usize] {
                    if d[u as usize] == u32::MAX {
                        d[u as usize] = d[v as usize] + 1;
                        q.push_back(u);
                    }
                }
            }
            d
        })
    }

    /// The links from `src` to `dst`, or `None` if `dst` is unreachable.
    pub fn path(&mut self, src: u32, dst: u32) -> Option<Vec<u32>> {
        self.distances(dst);
        let d = &self.dist_to[&dst];
        if d[src as usize] == u32::MAX {
            return None;
        }
        let mut path = Vec::with_capacity(d[src as usize] as usize);
        let mut at = src;
        while at != dst {
            let &(link, next) = self.out[at as usize]
                .iter()
                .find(|&&(_, b)| d[b as usize].checked_add(1) == Some(d[at as usize]))
                .expect("BFS distances are consistent");
            path.push(link);
            at = next;
        }
        Some(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

//! The import graph around a question: one hop from the top results, and personalized
//! PageRank around the open files where memory is thin.

use std::collections::{BTreeSet, HashMap};

/// The file import graph (importer → imported, one edge per `deps` row), by file id: what
/// personalized PageRank walks. Nodes are the files that take part in an edge, numbered
/// in file-id order; paths are looked up only for the files it returns.
#[derive(Debug, Default)]
pub(crate) struct ImportGraph {
    /// file id → node
    index: HashMap<i64, usize>,
    /// node → file id
    ids: Vec<i64>,
    /// importer → imported
    out: Vec<Vec<usize>>,
}

impl ImportGraph {
    /// Reads every resolved import edge (integers only: no paths, no sort of strings).
    pub(crate) fn load(conn: &loci_store::rusqlite::Connection) -> loci_store::Result<ImportGraph> {
        let mut g = ImportGraph::default();
        let edges = loci_store::map::import_edges(conn)?;
        let mut ids: Vec<i64> = edges.iter().flat_map(|&(a, b)| [a, b]).collect();
        ids.sort_unstable();
        ids.dedup();
        g.index = ids.iter().enumerate().map(|(i, &id)| (id, i)).collect();
        g.out = vec![Vec::new(); ids.len()];
        g.ids = ids;
        for (a, b) in edges {
            let (ia, ib) = (g.index[&a], g.index[&b]);
            g.out[ia].push(ib);
        }
        Ok(g)
    }

    /// PageRank personalized to `seeds` (paths; damping 0.85, 20 iterations; as Aider's
    /// repo map ranks files), returning the top `k` files other than the seeds with scores
    /// normalized to the best (ties in file-id order).
    pub(super) fn personalized_pagerank(
        &self,
        conn: &loci_store::rusqlite::Connection,
        seeds: &BTreeSet<String>,
        k: usize,
    ) -> loci_store::Result<Vec<(String, f64)>> {
        let n = self.ids.len();
        let mut seed_ids: Vec<usize> = Vec::new();
        for s in seeds {
            let id = loci_store::map::file_id(conn, s)?;
            if let Some(&i) = id.and_then(|id| self.index.get(&id)) {
                seed_ids.push(i);
            }
        }
        if n == 0 || seed_ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut p = vec![0.0; n];
        for &s in &seed_ids {
            p[s] = 1.0 / seed_ids.len() as f64;
        }
        let mut r = p.clone();
        for _ in 0..20 {
            let mut next: Vec<f64> = p.iter().map(|x| 0.15 * x).collect();
            let mut dangling = 0.0;
            for (i, edges) in self.out.iter().enumerate() {
                if edges.is_empty() {
                    dangling += r[i];
                    continue;
                }
                let share = 0.85 * r[i] / edges.len() as f64;
                for &j in edges {
                    next[j] += share;
                }
            }
            for &s in &seed_ids {
                next[s] += 0.85 * dangling / seed_ids.len() as f64;
            }
            r = next;
        }
        let mut ranked: Vec<(usize, f64)> = r
            .into_iter()
            .enumerate()
            .filter(|(i, v)| *v > 0.0 && !seed_ids.contains(i))
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let best = ranked.first().map(|x| x.1).unwrap_or(1.0);
        let mut out = Vec::new();
        for (i, v) in ranked.into_iter().take(k) {
            let path = loci_store::map::file_path(conn, self.ids[i])?;
            if let Some(path) = path {
                out.push((path, (v / best).min(1.0)));
            }
        }
        Ok(out)
    }
}

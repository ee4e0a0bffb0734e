//! Other names for the site's pages: a link or a typed address that uses a page's widget name
//! (`#/simt`, the SIMT visualiser's embed id), the US spelling (`#/visualizer`) or a singular
//! (`#/lesson/simt`) lands on the page instead of "not found". Pure: the app rewrites the hash
//! before the router reads it (`route::guard_hash`).

/// Alias → canonical first path segment. Only names a learner may plausibly type or follow:
/// the embed ids of whole pages, other spellings and singular/plural slips.
const ALIASES: [(&str, &str); 10] = [
    ("simt", "visualiser"),
    ("visualizer", "visualiser"),
    ("visualisation", "visualiser"),
    ("lessons", "learn"),
    ("lesson", "learn"),
    ("kernel", "kernels"),
    ("ladder", "kernels"),
    ("puzzle", "puzzles"),
    ("training", "train"),
    ("convolution", "conv"),
];

/// The canonical hash for `hash` (`#/simt?m=64` → `#/visualiser?m=64`), keeping the rest of
/// the path and the query as they are; None when the hash names no alias (it is then used as
/// it is).
pub fn canonical_hash(hash: &str) -> Option<String> {
    let path_and_query = hash.strip_prefix("#/")?;
    let end = path_and_query
        .find(['/', '?'])
        .unwrap_or(path_and_query.len());
    let (first, rest) = path_and_query.split_at(end);
    let canonical = ALIASES
        .iter()
        .find(|(alias, _)| alias.eq_ignore_ascii_case(first))
        .map(|(_, to)| *to)?;
    Some(format!("#/{canonical}{rest}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simt_is_the_visualiser_with_its_query_kept() {
        assert_eq!(canonical_hash("#/simt").as_deref(), Some("#/visualiser"));
        assert_eq!(
            canonical_hash("#/simt?lang=zh&m=64&stage=matmul-tiled").as_deref(),
            Some("#/visualiser?lang=zh&m=64&stage=matmul-tiled")
        );
        assert_eq!(
            canonical_hash("#/Visualizer?x=1").as_deref(),
            Some("#/visualiser?x=1")
        );
    }

    #[test]
    fn a_singular_keeps_the_rest_of_its_path() {
        assert_eq!(
            canonical_hash("#/lesson/simt?lang=zh").as_deref(),
            Some("#/learn/simt?lang=zh")
        );
        assert_eq!(
            canonical_hash("#/puzzle/map").as_deref(),
            Some("#/puzzles/map")
        );
    }

    #[test]
    fn canonical_and_unknown_routes_are_left_alone() {
        for h in [
            "#/visualiser?m=1",
            "#/learn/simt",
            "#/",
            "#/nowhere",
            "#/simtx",
            "#/kernels",
            "",
            "#simt",
        ] {
            assert_eq!(canonical_hash(h), None, "{h}");
        }
    }
}

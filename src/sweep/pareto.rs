//! The Pareto front: the configs no other config beats on both price and
//! damage (results mangled). Any config off the front has another that is at
//! least as cheap and mangles at most as much, and is strictly better on one
//! of the two; the front is the list of honest trade-offs.

/// Which of `points` (lower is better on both coordinates) are on the front:
/// not dominated by any other point. Equal points do not dominate each
/// other, so duplicates on the front are all flagged. O(n log n).
pub(crate) fn front(points: &[(f64, f64)]) -> Vec<bool> {
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_by(|&a, &b| {
        points[a]
            .0
            .total_cmp(&points[b].0)
            .then(points[a].1.total_cmp(&points[b].1))
    });
    let mut on = vec![false; points.len()];
    // The lowest second coordinate among points with a strictly lower first
    // coordinate than the group being looked at.
    let mut best_before = f64::INFINITY;
    let mut g = 0;
    while g < order.len() {
        let x = points[order[g]].0;
        let mut end = g;
        while end < order.len() && points[order[end]].0.total_cmp(&x).is_eq() {
            end += 1;
        }
        // Within a group of equal first coordinates, sorted by the second,
        // only the points tying for the lowest second can be on the front,
        // and only if no cheaper point already does as well.
        let y_min = points[order[g]].1;
        if y_min < best_before {
            for &i in &order[g..end] {
                if points[i].1.total_cmp(&y_min).is_eq() {
                    on[i] = true;
                }
            }
            best_before = y_min;
        }
        g = end;
    }
    on
}

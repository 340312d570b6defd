//! `ClientService`: Get, Mutate, Multi and Scan over the region store, as HBase's
//! `RSRpcServices` answers them.

use std::sync::Arc;

use cairn_cell::KeyValue;
use cairn_region::{Put, Region, RegionRead};
use cairn_rpc::cellblock::CellBlockReader;
use cairn_rpc::pb;

use super::convert::{get_from_pb, mutation_from_pb, scan_from_pb, Mutation, ResultWriter};
use super::errors::{self, RpcError};
use super::meta;
use super::scanners::OpenScanner;
use super::Services;

/// Where a call is addressed.
pub enum Target {
    /// The `hbase:meta` region.
    Meta,
    /// A user region.
    Region(Arc<Region>),
}

impl Target {
    /// The region reads of this target go to: every read goes through [`RegionRead`].
    fn reader<'a>(&'a self, s: &'a Services) -> &'a dyn RegionRead {
        match self {
            Target::Meta => &s.meta,
            Target::Region(r) => &**r,
        }
    }
}

impl Services {
    /// The region a specifier names. One that is not served here (split or merged away,
    /// closed for a split, its table disabled) is HBase's `NotServingRegionException`
    /// with its text, `<name> is not online on <server>`: the client then looks the row up
    /// in meta again and retries there.
    pub fn target(&self, spec: &pb::RegionSpecifier) -> Result<Target, RpcError> {
        // In a cluster, meta is a region like any other, opened where the master put it.
        if meta::is_meta(spec) && self.cluster.is_none() {
            return Ok(Target::Meta);
        }
        match self.rs.region_by_name(&spec.value) {
            Ok((_, region)) => Ok(Target::Region(region)),
            Err(cairn_region::RegionError::NotServingRegion(_)) => Err(RpcError::new(
                errors::NOT_SERVING_REGION,
                format!(
                    "{} is not online on {}",
                    cairn_cell::Escaped(&spec.value),
                    self.meta.location().name()
                ),
                false,
            )),
            Err(e) => Err(e.into()),
        }
    }

    fn user_region(&self, spec: &pb::RegionSpecifier) -> Result<Arc<Region>, RpcError> {
        match self.target(spec)? {
            Target::Region(r) => Ok(r),
            Target::Meta => Err(RpcError::bad_request(
                "hbase:meta is maintained by cairn and takes no writes",
            )),
        }
    }

    /// `Get`.
    pub fn get(
        &self,
        req: &pb::GetRequest,
        out: &mut ResultWriter,
    ) -> Result<pb::GetResponse, RpcError> {
        let result = self.read_row(&self.target(&req.region)?, &req.get, out)?;
        Ok(pb::GetResponse {
            result: Some(result),
        })
    }

    /// Applies one mutation to `region`; the cells Increment and Append return.
    fn apply(&self, region: &Arc<Region>, m: &Mutation) -> Result<Option<Vec<KeyValue>>, RpcError> {
        let out = match m {
            Mutation::Put(p) => {
                region.put(p)?;
                None
            }
            Mutation::Delete(d) => {
                region.delete(d)?;
                None
            }
            Mutation::Increment(i) => Some(region.increment(i)?),
            Mutation::Append(a) => Some(region.append(a)?),
        };
        self.rs.wrote(region);
        Ok(out)
    }

    /// `Mutate`: one mutation, or a check-and-mutate when it has a condition.
    pub fn mutate(
        &self,
        req: &pb::MutateRequest,
        cells: &mut CellBlockReader,
        out: &mut ResultWriter,
    ) -> Result<pb::MutateResponse, RpcError> {
        let region = self.user_region(&req.region)?;
        let m = mutation_from_pb(&req.mutation, cells)?;
        if let Some(cond) = &req.condition {
            let (processed, cells) = self.check_and_mutate(&region, cond, vec![m])?;
            return Ok(pb::MutateResponse {
                result: cells.map(|c| out.result(c.as_slice())),
                processed: Some(processed),
            });
        }
        let cells = self.apply(&region, &m)?;
        Ok(pb::MutateResponse {
            result: cells.map(|c| out.result(&c)),
            processed: Some(true),
        })
    }

    /// `Multi`: each region action applied on its own; a failed action (or region) gets its
    /// exception while the others still apply, as in HBase.
    pub fn multi(
        &self,
        req: &pb::MultiRequest,
        cells: &mut CellBlockReader,
        out: &mut ResultWriter,
    ) -> Result<pb::MultiResponse, RpcError> {
        let mut resp = pb::MultiResponse::default();
        // HBase 2.0's request-level condition, still honoured for old clients.
        #[allow(deprecated)]
        let request_condition = req.condition.as_ref();
        for ra in &req.region_action {
            // Read every action's cells first: the block is one stream for all region actions,
            // so a region that fails must still consume its share.
            let mut parsed = Vec::with_capacity(ra.action.len());
            for a in &ra.action {
                parsed.push(match (&a.mutation, &a.get) {
                    (Some(m), _) => Parsed::Mutation(mutation_from_pb(m, cells)),
                    (None, Some(g)) => Parsed::Get(g),
                    (None, None) => Parsed::Unsupported,
                });
            }
            let rar = match self.region_action(ra, request_condition, parsed, out) {
                Ok(r) => r,
                Err(e) => pb::RegionActionResult {
                    exception: Some(e.to_name_bytes()),
                    ..Default::default()
                },
            };
            if ra.atomic.unwrap_or(false) || ra.condition.is_some() || request_condition.is_some() {
                // Old clients read the outcome here; HBase still sets it.
                #[allow(deprecated)]
                {
                    resp.processed = rar.processed;
                }
            }
            resp.region_action_result.push(rar);
        }
        Ok(resp)
    }

    fn region_action(
        &self,
        ra: &pb::RegionAction,
        request_condition: Option<&pb::Condition>,
        parsed: Vec<Parsed<'_>>,
        out: &mut ResultWriter,
    ) -> Result<pb::RegionActionResult, RpcError> {
        let target = self.target(&ra.region)?;
        let index = |i: usize| ra.action[i].index;
        let condition = ra.condition.as_ref().or(request_condition);
        if ra.atomic.unwrap_or(false) || condition.is_some() {
            let region = match target {
                Target::Region(r) => r,
                Target::Meta => return Err(RpcError::bad_request("hbase:meta takes no writes")),
            };
            let mut muts = Vec::with_capacity(parsed.len());
            for p in parsed {
                match p {
                    Parsed::Mutation(m) => muts.push(m?),
                    _ => {
                        return Err(RpcError::bad_request(
                            "an atomic region action may hold only mutations",
                        ))
                    }
                }
            }
            let n = muts.len();
            let (processed, cells) = match condition {
                Some(cond) => self.check_and_mutate(&region, cond, muts)?,
                None => (true, self.mutate_row(&region, muts)?),
            };
            // As HBase's RSRpcServices answers atomic and conditional region actions: results
            // by position (0..n), not by the actions' indexes; an Increment's or Append's cells
            // in the first; the outcome in `processed`.
            let mut rar = pb::RegionActionResult {
                processed: Some(processed),
                ..Default::default()
            };
            for i in 0..n {
                let result = match (&cells, i) {
                    (Some(c), 0) => Some(out.result(c)),
                    // mutateRow answers an empty Result for each action.
                    (_, _) if condition.is_none() => Some(pb::Result::default()),
                    _ => None,
                };
                rar.result_or_exception.push(pb::ResultOrException {
                    index: Some(i as u32),
                    result,
                    ..Default::default()
                });
            }
            return Ok(rar);
        }
        let mut rar = pb::RegionActionResult::default();
        let mut parsed = parsed.into_iter().enumerate().peekable();
        while let Some((i, p)) = parsed.next() {
            let outcome: Result<Option<pb::Result>, RpcError> = match p {
                Parsed::Get(g) => self.read_row(&target, g, out).map(Some),
                Parsed::Unsupported => Err(RpcError::bad_request(
                    "coprocessor service calls are not supported by cairn",
                )),
                Parsed::Mutation(Err(e)) => Err(e),
                Parsed::Mutation(Ok(Mutation::Put(first))) => {
                    // A run of puts goes to the region as one mini-batch: one WAL sync.
                    let mut run = vec![(i, first)];
                    while let Some((_, Parsed::Mutation(Ok(Mutation::Put(_))))) = parsed.peek() {
                        if let Some((j, Parsed::Mutation(Ok(Mutation::Put(p))))) = parsed.next() {
                            run.push((j, p));
                        }
                    }
                    self.put_run(&target, &run, index, &mut rar);
                    continue;
                }
                Parsed::Mutation(Ok(m)) => match &target {
                    Target::Region(r) => self
                        .apply(r, &m)
                        .map(|c| Some(c.map(|c| out.result(&c)).unwrap_or_default())),
                    Target::Meta => Err(RpcError::bad_request("hbase:meta takes no writes")),
                },
            };
            rar.result_or_exception.push(match outcome {
                Ok(result) => pb::ResultOrException {
                    index: index(i),
                    result,
                    ..Default::default()
                },
                Err(e) => pb::ResultOrException {
                    index: index(i),
                    exception: Some(e.to_name_bytes()),
                    ..Default::default()
                },
            });
        }
        Ok(rar)
    }

    /// Puts of one region action: one batch, or, if the batch is refused, each put on its
    /// own so that only the bad ones fail.
    fn put_run(
        &self,
        target: &Target,
        run: &[(usize, Put)],
        index: impl Fn(usize) -> Option<u32>,
        rar: &mut pb::RegionActionResult,
    ) {
        let ok = |i: usize| pb::ResultOrException {
            index: index(i),
            result: Some(pb::Result::default()),
            ..Default::default()
        };
        let failed = |i: usize, e: RpcError| pb::ResultOrException {
            index: index(i),
            exception: Some(e.to_name_bytes()),
            ..Default::default()
        };
        let region = match target {
            Target::Region(r) => r,
            Target::Meta => {
                for (i, _) in run {
                    rar.result_or_exception.push(failed(
                        *i,
                        RpcError::bad_request("hbase:meta takes no writes"),
                    ));
                }
                return;
            }
        };
        let puts: Vec<&Put> = run.iter().map(|(_, p)| p).collect();
        match region.put_batch(&puts) {
            Ok(()) => {
                self.rs.wrote(region);
                rar.result_or_exception
                    .extend(run.iter().map(|(i, _)| ok(*i)));
            }
            Err(e) if run.len() == 1 => rar.result_or_exception.push(failed(run[0].0, e.into())),
            Err(_) => {
                for (i, p) in run {
                    let r = region.put(p);
                    rar.result_or_exception.push(match r {
                        Ok(()) => ok(*i),
                        Err(e) => failed(*i, e.into()),
                    });
                }
                self.rs.wrote(region);
            }
        }
    }

    /// One `Get` (of a `Get` call or a Multi's action): its cells as a `Result`, or only
    /// whether there are any when it asks for existence.
    fn read_row(
        &self,
        target: &Target,
        g: &pb::Get,
        out: &mut ResultWriter,
    ) -> Result<pb::Result, RpcError> {
        let exists_only = g.existence_only.unwrap_or(false);
        let cells = target.reader(self).get(get_from_pb(g)?)?;
        Ok(if exists_only {
            pb::Result {
                exists: Some(!cells.is_empty()),
                ..Default::default()
            }
        } else {
            out.result(&cells)
        })
    }

    /// `Scan`: opens a scanner, returns rows from it, renews or closes it. `timeout_ms` is
    /// the call's timeout from its header, which bounds how long the call may skip rows.
    pub fn scan(
        &self,
        req: &pb::ScanRequest,
        timeout_ms: Option<u32>,
        out: &mut ResultWriter,
    ) -> Result<pb::ScanResponse, RpcError> {
        let lease_ms = self.scanners.lease().as_millis() as u32;
        let (id, scanner) = match req.scanner_id {
            Some(id) => {
                let s = self.scanners.get(id).ok_or_else(|| {
                    RpcError::new(
                        errors::UNKNOWN_SCANNER,
                        format!(
                            "Unknown scanner '{id}'. This can happen due to any of the following reasons: a) Scanner id given is wrong, b) Scanner lease expired because of long wait between consecutive client checkins, c) Server may be closing down, d) RegionServer restart during upgrade.\nIf the issue is due to reason (b), a possible fix would be increasing the value of'hbase.client.scanner.timeout.period' configuration."
                        ),
                        true,
                    )
                })?;
                (id, s)
            }
            None => {
                let region = req.region.as_ref().ok_or_else(|| {
                    RpcError::bad_request("Scan request without region or scanner id")
                })?;
                let spec = req.scan.as_ref().ok_or_else(|| {
                    RpcError::bad_request("Scan request without scanner id or scan")
                })?;
                let scan = scan_from_pb(spec)?;
                let limit = req.limit_of_rows.filter(|&n| n > 0).map(|n| n as usize);
                let scanner = self.target(region)?.reader(self).scanner(scan)?;
                let mut o = OpenScanner::new(scanner, limit);
                o.max_bytes = spec
                    .max_result_size
                    .filter(|&n| n > 0)
                    .map_or(self.max_result_size, |n| {
                        (n as usize).min(self.max_result_size)
                    });
                self.scanners.add(o)
            }
        };
        let mut s = scanner.lock();
        let mut resp = pb::ScanResponse {
            scanner_id: Some(id),
            ttl: Some(lease_ms),
            ..Default::default()
        };
        if req.scanner_id.is_some() {
            if let Some(seq) = req.next_call_seq {
                if seq != s.next_call_seq {
                    self.scanners.remove(id);
                    return Err(RpcError::new(
                        errors::OUT_OF_ORDER_SCANNER_NEXT,
                        format!(
                            "Expected nextCallSeq: {} But the nextCallSeq got from client: {seq}; request={}",
                            s.next_call_seq,
                            id
                        ),
                        true,
                    ));
                }
                // As HBase: the sequence starts at 0 with the first call after the open, and
                // only calls that carry it move it on.
                s.next_call_seq += 1;
            }
        } else {
            resp.mvcc_read_point = Some(s.read_point());
        }
        if req.renew.unwrap_or(false) {
            return Ok(resp);
        }
        let wanted = req.number_of_rows.unwrap_or(0) as usize;
        // HBase's time limit for one scan call: half the call's timeout (or of the scanner
        // lease), at least `min_scan_time_limit`; a client that handles heartbeats then hears back in time
        // even while a filter drops every row.
        let started = std::time::Instant::now();
        let heartbeats = req.client_handles_heartbeats.unwrap_or(false);
        let limit_ms = timeout_ms
            .filter(|&t| t > 0)
            .map_or(lease_ms as u64, u64::from)
            / 2;
        let limit = std::time::Duration::from_millis(limit_ms).max(self.min_scan_time_limit);
        s.set_deadline(heartbeats.then(|| started + limit));
        let max_bytes = s.max_bytes;
        // A row larger than what is left of the call's byte budget goes out in parts, flagged
        // partial, to a client that reassembles them (HBase 2 clients all do); the rest of
        // the row opens the next call.
        let partials = req.client_handles_partials.unwrap_or(false);
        let mut rows = 0usize;
        let mut limit_hit = false;
        let mut results: Vec<(Vec<KeyValue>, bool)> = Vec::new();
        let mut bytes = 0usize;
        let mut heartbeat = false;
        let size = |c: &KeyValue| cairn_rpc::cellblock::encoded_len(&c.as_cell(), false);
        while rows < wanted && bytes < max_bytes {
            let row = match s.partial_rest.take() {
                Some(rest) => rest,
                None => {
                    if s.rows_left == Some(0) {
                        limit_hit = true;
                        break;
                    }
                    let Some(row) = s.next_row()? else {
                        heartbeat = s.timed_out();
                        break;
                    };
                    row
                }
            };
            let row_bytes: usize = row.iter().map(size).sum();
            if partials && row.len() > 1 && bytes + row_bytes > max_bytes {
                let mut take = 0;
                let mut b = bytes;
                while take < row.len() - 1 && (take == 0 || b + size(&row[take]) <= max_bytes) {
                    b += size(&row[take]);
                    take += 1;
                }
                let mut part = row;
                s.partial_rest = Some(part.split_off(take));
                results.push((part, true));
                break;
            }
            bytes += row_bytes;
            if let Some(left) = s.rows_left.as_mut() {
                *left -= 1;
                if *left == 0 {
                    limit_hit = true;
                }
            }
            rows += 1;
            results.push((row, false));
            if limit_hit {
                break;
            }
        }
        let filter_done = s.filter_done();
        let in_region = s.partial_rest.is_some() || (!s.exhausted && !limit_hit && !filter_done);
        // HBase: a filter that has finished the scan, in a call that returned nothing, ends
        // the whole scan (moreResults false); otherwise the client moves to the next region.
        let more_results = !(limit_hit || (filter_done && results.is_empty()));
        if out.uses_cell_block() {
            for (r, partial) in &results {
                let mut tmp = pb::Result::default();
                out.add_cells(r, &mut tmp);
                resp.cells_per_result.push(r.len() as u32);
                resp.partial_flag_per_result.push(*partial);
            }
        } else {
            for (r, partial) in &results {
                let mut m = out.result(r);
                m.partial = Some(*partial);
                resp.results.push(m);
                resp.partial_flag_per_result.push(*partial);
            }
        }
        resp.more_results_in_region = Some(in_region);
        resp.more_results = Some(more_results);
        if heartbeat {
            resp.heartbeat_message = Some(true);
            if req
                .scan
                .as_ref()
                .and_then(|sc| sc.need_cursor_result)
                .unwrap_or(false)
                || results.is_empty()
            {
                resp.cursor = Some(pb::Cursor {
                    row: Some(s.cursor_row()),
                });
            }
        }
        drop(s);
        if !in_region || !more_results || req.close_scanner.unwrap_or(false) {
            self.scanners.remove(id);
            if req.close_scanner.unwrap_or(false) {
                resp.more_results = Some(false);
            }
        }
        Ok(resp)
    }
}

/// A Multi action before it runs.
enum Parsed<'a> {
    Get(&'a pb::Get),
    Mutation(Result<Mutation, RpcError>),
    Unsupported,
}

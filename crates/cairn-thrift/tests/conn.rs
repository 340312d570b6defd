//! Serving a connection: answers to requests that arrived together leave together, and a
//! request that arrives alone is answered at once.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::rc::Rc;

use cairn_thrift::{serve_connection, ConnectionStats, Limits, Outcome};
use thrift::protocol::{
    TBinaryInputProtocol, TBinaryOutputProtocol, TInputProtocol, TMessageIdentifier, TMessageType,
    TOutputProtocol, TStructIdentifier, TType,
};
use thrift::server::TProcessor;

/// Answers every call with an empty reply carrying the call's name and sequence number.
struct Echo;

impl TProcessor for Echo {
    fn process(
        &self,
        i: &mut dyn TInputProtocol,
        o: &mut dyn TOutputProtocol,
    ) -> thrift::Result<()> {
        let m = i.read_message_begin()?;
        i.skip(TType::Struct)?;
        i.read_message_end()?;
        o.write_message_begin(&TMessageIdentifier::new(
            &m.name,
            TMessageType::Reply,
            m.sequence_number,
        ))?;
        o.write_struct_begin(&TStructIdentifier::new("reply"))?;
        o.write_field_stop()?;
        o.write_struct_end()?;
        o.write_message_end()?;
        o.flush()
    }
}

fn call(seq: i32) -> Vec<u8> {
    let mut buf = Vec::new();
    {
        let mut p = TBinaryOutputProtocol::new(&mut buf, true);
        p.write_message_begin(&TMessageIdentifier::new("ping", TMessageType::Call, seq))
            .unwrap();
        p.write_struct_begin(&TStructIdentifier::new("args"))
            .unwrap();
        p.write_field_stop().unwrap();
        p.write_struct_end().unwrap();
        p.write_message_end().unwrap();
        p.flush().unwrap();
    }
    buf
}

/// Hands out the bytes of one arrival per read, as a socket does.
struct Arrivals(VecDeque<Vec<u8>>);

impl Read for Arrivals {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let Some(mut next) = self.0.pop_front() else {
            return Ok(0);
        };
        let n = next.len().min(buf.len());
        buf[..n].copy_from_slice(&next[..n]);
        if n < next.len() {
            next.drain(..n);
            self.0.push_front(next);
        }
        Ok(n)
    }
}

/// Records what reaches the socket: `.0` written since the last flush, `.1` one entry per
/// write-out.
#[derive(Clone, Default)]
struct Sent(Rc<RefCell<Unflushed>>);

type Unflushed = (Vec<u8>, Vec<Vec<u8>>);

impl Write for Sent {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        let mut s = self.0.borrow_mut();
        if !s.0.is_empty() {
            let chunk = std::mem::take(&mut s.0);
            s.1.push(chunk);
        }
        Ok(())
    }
}

/// The sequence numbers of the replies in one write-out.
fn replies(chunk: &[u8], framed: bool) -> Vec<i32> {
    let mut rest = chunk;
    let mut out = Vec::new();
    while !rest.is_empty() {
        if framed {
            let len = i32::from_be_bytes(rest[..4].try_into().unwrap()) as usize;
            rest = &rest[4..];
            assert!(rest.len() >= len, "a frame cut across write-outs");
        }
        let mut p = TBinaryInputProtocol::new(&mut rest, true);
        let m = p.read_message_begin().unwrap();
        assert_eq!(m.message_type, TMessageType::Reply);
        p.skip(TType::Struct).unwrap();
        p.read_message_end().unwrap();
        out.push(m.sequence_number);
    }
    out
}

fn frame(call: Vec<u8>) -> Vec<u8> {
    let mut f = (call.len() as i32).to_be_bytes().to_vec();
    f.extend(call);
    f
}

#[test]
fn answers_to_requests_that_arrive_together_leave_together() {
    for framed in [false, true] {
        let call = |seq| if framed { frame(call(seq)) } else { call(seq) };
        let together: Vec<u8> = (1..=3).flat_map(call).collect();
        let arrivals = Arrivals(VecDeque::from([together, call(4), call(5)]));
        let sent = Sent::default();
        let (_, outcome) = serve_connection(
            arrivals,
            sent.clone(),
            &Echo,
            &Limits::default(),
            &ConnectionStats::default(),
            &mut (),
        );
        assert_eq!(outcome, Outcome::Closed);
        let chunks: Vec<Vec<i32>> = sent
            .0
            .borrow()
            .1
            .iter()
            .map(|c| replies(c, framed))
            .collect();
        // Requests 4 and 5 came alone: each answered before the next was read.
        assert_eq!(
            chunks,
            vec![vec![1, 2, 3], vec![4], vec![5]],
            "framed {framed}"
        );
        assert!(sent.0.borrow().0.is_empty(), "nothing left unsent");
    }
}

#[test]
fn many_waiting_requests_are_answered_in_bounded_writes() {
    // 64 KiB of answers is the most held back while requests wait.
    let n = 4000;
    let all: Vec<u8> = (1..=n).flat_map(call).collect();
    let sent = Sent::default();
    serve_connection(
        Arrivals(VecDeque::from([all])),
        sent.clone(),
        &Echo,
        &Limits::default(),
        &ConnectionStats::default(),
        &mut (),
    );
    let s = sent.0.borrow();
    let seqs: Vec<i32> = s.1.iter().flat_map(|c| replies(c, false)).collect();
    assert_eq!(seqs, (1..=n).collect::<Vec<_>>());
    assert!(s.1.len() > 1);
    assert!(s.1.iter().all(|c| c.len() < 64 * 1024 + 64));
}

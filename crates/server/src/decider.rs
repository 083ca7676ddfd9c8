//! The decision thread: one engine, fed through a queue, deciding in batches.
//!
//! Every decision writes (an audit row, maybe a request or a consumed
//! grant), and SQLite has one writer at a time. Rather than HTTP workers
//! taking turns on a lock (and sleeping on it), one thread owns the engine,
//! drains whatever calls are waiting (up to [`MAX_BATCH`]) and decides them
//! in order under one write transaction: one commit per batch instead of per
//! call. Each call still sees the ones before it (a once grant is used once),
//! and no answer leaves before its batch is committed — if the commit fails,
//! every call of the batch gets an error (a deny at the front door).
//!
//! The thread outlives any one call: it runs on a [`STACK_SIZE`] stack (deep
//! shell texts recurse deeply), a call whose decision panics is answered with
//! an error while the rest of its batch goes on, and before each batch it
//! asks [`Health`] whether the database is still the one it opened.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::mpsc;

use portcullis_engine::{CallContext, Engine, EngineError, Outcome};
use portcullis_paths::FsPaths;
use portcullis_policy::ToolCall;
use tokio::sync::oneshot;

use crate::Judge;
use crate::health::Health;

/// The most calls decided under one commit.
pub const MAX_BATCH: usize = 64;

/// The decision thread's stack: analysis recurses over the shell text's
/// nesting, and a stack overflow is not a panic (it aborts the process).
pub const STACK_SIZE: usize = 64 * 1024 * 1024;

/// Why a call got no decision.
#[derive(Debug)]
pub enum DecideError {
    /// Different session ids from different sources.
    Conflict(Vec<(&'static str, String)>),
    /// The store failed (the message), or the decision thread is gone.
    Engine(String),
}

/// What the decision thread does: decide a call, or run another engine
/// operation (a pin check, a hold, a session) in the same order and batch.
enum Job {
    Decide(Box<DecideJob>),
    /// Runs on the engine (or is told why not) and returns how to answer
    /// its caller once the batch is committed (or failed).
    Op(Op),
}

struct DecideJob {
    judge: Arc<Judge>,
    /// Sessions entered first (registered when new): a device's own.
    sessions: Vec<portcullis_store::NewSession>,
    call: ToolCall,
    ctx: CallContext,
    reply: oneshot::Sender<Result<Outcome, DecideError>>,
}

/// An engine operation: runs on the engine (or is told why not).
type Op = Box<dyn FnOnce(Result<&Engine<FsPaths>, String>) -> Deliver + Send>;

/// Answers an operation's caller: `Ok` once its batch is committed.
type Deliver = Box<dyn FnOnce(Result<(), String>) + Send>;

impl Job {
    /// Answers a job that will not run.
    fn refuse(self, why: String) {
        match self {
            Job::Decide(job) => {
                let _ = job.reply.send(Err(DecideError::Engine(why)));
            }
            Job::Op(op) => op(Err(why.clone()))(Err(why)),
        }
    }
}

/// The queue into the decision thread.
pub struct Decider {
    queue: mpsc::Sender<Job>,
}

impl Decider {
    /// Starts the thread; it ends when the `Decider` is dropped.
    pub fn start(engine: Engine<FsPaths>, health: Arc<Health>) -> std::io::Result<Decider> {
        let (queue, jobs) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("portcullis-decide".into())
            .stack_size(STACK_SIZE)
            .spawn(move || run(engine, &health, jobs))?;
        Ok(Decider { queue })
    }

    /// Decides `call` with the policy and facts of `judge`.
    pub async fn decide(
        &self,
        judge: Arc<Judge>,
        call: ToolCall,
        ctx: CallContext,
    ) -> Result<Outcome, DecideError> {
        self.enter_and_decide(judge, Vec::new(), call, ctx).await
    }

    /// Enters `sessions` (registering the new ones, parents first), then
    /// decides `call`, in one trip to the decision thread.
    pub async fn enter_and_decide(
        &self,
        judge: Arc<Judge>,
        sessions: Vec<portcullis_store::NewSession>,
        call: ToolCall,
        ctx: CallContext,
    ) -> Result<Outcome, DecideError> {
        let (reply, answer) = oneshot::channel();
        let gone = || DecideError::Engine("the decision thread has stopped".into());
        self.queue
            .send(Job::Decide(Box::new(DecideJob {
                judge,
                sessions,
                call,
                ctx,
                reply,
            })))
            .map_err(|_| gone())?;
        answer.await.map_err(|_| gone())?
    }

    /// Runs `f` on the decision thread's engine (in order with the
    /// decisions, inside their batch): the MCP bridge's pins and holds.
    pub async fn with_engine<R, G>(&self, f: G) -> Result<R, DecideError>
    where
        R: Send + 'static,
        G: FnOnce(&Engine<FsPaths>) -> Result<R, EngineError> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let job = Job::Op(Box::new(move |engine: Result<&Engine<FsPaths>, String>| {
            let result = match engine {
                Ok(engine) => match catch_unwind(AssertUnwindSafe(|| f(engine))) {
                    Ok(r) => r.map_err(DecideError::from),
                    Err(p) => Err(DecideError::Engine(format!(
                        "an engine operation failed (a bug in portcullis: {})",
                        panic_message(p.as_ref())
                    ))),
                },
                Err(why) => Err(DecideError::Engine(why)),
            };
            Box::new(move |committed: Result<(), String>| {
                let _ = reply.send(committed.map_err(DecideError::Engine).and(result));
            }) as Deliver
        }));
        let gone = || DecideError::Engine("the decision thread did not run this".into());
        self.queue.send(job).map_err(|_| gone())?;
        answer.await.map_err(|_| gone())?
    }
}

impl From<EngineError> for DecideError {
    fn from(e: EngineError) -> Self {
        match e {
            EngineError::SessionConflict { sources } => DecideError::Conflict(sources),
            other => DecideError::Engine(other.to_string()),
        }
    }
}

impl std::fmt::Display for DecideError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecideError::Conflict(sources) => write!(
                f,
                "{}",
                EngineError::SessionConflict {
                    sources: sources.clone()
                }
            ),
            DecideError::Engine(why) => f.write_str(why),
        }
    }
}

/// What one job of a batch produced.
enum Done {
    Decided(Box<Result<Result<Outcome, EngineError>, String>>),
    /// An operation ran; answer its caller after the commit.
    Ran(Deliver),
}

/// What a panic said, for the error a caller gets.
fn panic_message(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}

fn run(engine: Engine<FsPaths>, health: &Health, jobs: mpsc::Receiver<Job>) {
    while let Ok(first) = jobs.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match jobs.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        // Deciding against a deleted or replaced file would split the state
        // (grants consumed where nobody else looks): refuse instead.
        if let Some(why) = health.why_not_ready() {
            for job in batch {
                job.refuse(why.clone());
            }
            continue;
        }
        let now = portcullis_store::unix_now();
        // A panic in one decision must not take the thread (and with it every
        // later decision) down: that call is answered with an error (its
        // store operations rolled back with their savepoints), the others go
        // on. A panic outside the calls rolls the batch back.
        let decided = catch_unwind(AssertUnwindSafe(|| {
            engine.batch(|engine| {
                batch
                    .iter_mut()
                    .map(|job| match job {
                        Job::Decide(job) => Done::Decided(Box::new(
                            catch_unwind(AssertUnwindSafe(|| {
                                #[cfg(test)]
                                if job.call.tool.name == tests::PANIC_TOOL {
                                    panic!("a test asked for a panic");
                                }
                                let j = &job.judge;
                                engine.enter_and_decide_under(
                                    &job.sessions,
                                    &j.policy,
                                    &j.facts,
                                    &job.call,
                                    &job.ctx,
                                    now,
                                )
                            }))
                            .map_err(|p| {
                                format!(
                                    "deciding this call failed (a bug in portcullis: {})",
                                    panic_message(p.as_ref())
                                )
                            }),
                        )),
                        Job::Op(op) => {
                            let op = std::mem::replace(op, Box::new(|_| Box::new(|_| {})));
                            Done::Ran(op(Ok(engine)))
                        }
                    })
                    .collect::<Vec<_>>()
            })
        }))
        .unwrap_or_else(|_| {
            Err(EngineError::Store(
                portcullis_store::StoreError::InvalidRequest {
                    why: "a decision panicked; its batch was rolled back".into(),
                },
            ))
        });
        match decided {
            Ok(outcomes) => {
                for (job, outcome) in batch.into_iter().zip(outcomes) {
                    match (job, outcome) {
                        (Job::Decide(job), Done::Decided(outcome)) => {
                            let answer = match *outcome {
                                Ok(decided) => decided.map_err(DecideError::from),
                                Err(panicked) => Err(DecideError::Engine(panicked)),
                            };
                            // The caller may have gone (client hung up): nothing to do.
                            let _ = job.reply.send(answer);
                        }
                        (_, Done::Ran(deliver)) => deliver(Ok(())),
                        (job, Done::Decided(_)) => job.refuse("lost its decision".into()),
                    }
                }
            }
            Err(e) => {
                let why = format!("the batch could not be committed: {e}");
                for job in batch {
                    job.refuse(why.clone());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use portcullis_paths::{Environment, Scopes};
    use portcullis_policy::{Origin, Policy, ToolRef};
    use serde_json::json;

    use super::*;

    /// A call by this tool name panics inside the decision (tests only).
    pub const PANIC_TOOL: &str = "test-panics-here";

    fn call(tool: &str, dir: &std::path::Path) -> ToolCall {
        ToolCall {
            tool: ToolRef {
                name: tool.into(),
                origin: Origin::Core,
                server: None,
                manifest: None,
            },
            input: json!({"command": "git status"}),
            cwd: dir.display().to_string(),
        }
    }

    #[tokio::test]
    async fn a_panicking_decision_is_an_error_and_the_thread_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let store = portcullis_store::Store::open(&dir.path().join("data")).unwrap();
        let health = Arc::new(Health::of(&store));
        let env = Environment {
            home: dir.path().display().to_string(),
            config_dir: dir.path().join("config").display().to_string(),
            data_dir: dir.path().join("data").display().to_string(),
        };
        let facts = || FsPaths::new(&Scopes::default(), &env);
        let engine = Engine::new(store, Policy::default(), facts());
        let decider = Decider::start(engine, health).unwrap();
        let judge = Arc::new(Judge {
            policy: Policy::default(),
            facts: crate::JudgeFacts::Local(facts()),
        });
        let decide = |tool: &str| {
            decider.decide(
                Arc::clone(&judge),
                call(tool, dir.path()),
                CallContext::default(),
            )
        };
        // In one batch: the panicking call fails alone.
        let (bad, good) = tokio::join!(decide(PANIC_TOOL), decide("Bash"));
        match bad {
            Err(DecideError::Engine(why)) => assert!(why.contains("a bug in portcullis"), "{why}"),
            other => panic!("{other:?}"),
        }
        assert!(good.is_ok(), "{good:?}");
        for _ in 0..3 {
            assert!(decide(PANIC_TOOL).await.is_err());
            assert!(decide("Bash").await.is_ok());
        }
    }
}

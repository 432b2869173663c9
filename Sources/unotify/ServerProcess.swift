import ConnectionLifecycle

/// What the commands that serve set for their process first, before their threads start.
enum ServerProcess {
    /// Bounds the allocator's arenas (``MallocArenas``) and raises the open-files limit to what the
    /// system allows (each connection is a file; the listeners share the limit: ``ConnectionBudget``).
    static func prepare() {
        MallocArenas.limitToProcessorCount()
        OpenFilesLimit.raiseToHardLimit()
    }
}

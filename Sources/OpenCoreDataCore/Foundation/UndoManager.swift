/// Records changes so that they can be undone and redone — Foundation's `UndoManager`, which
/// swift-corelibs-foundation lacks. A managed object context records its changes with one when its
/// `undoManager` is set.
///
/// ```swift
/// context.undoManager = UndoManager()
/// employee.firstName = "Ada"
/// context.undo()   // firstName is back to what it was
/// ```
///
/// With `groupsByEvent` (the default) registrations made before the next `undo()`, or before the context
/// next processes pending changes, form one group; there is no run loop on Linux to end the event.
open class UndoManager: NSObject, @unchecked Sendable {
    // @unchecked: a context's undo manager is used on that context's queue only, as Apple's is used on one thread.
    private enum Item {
        case action(target: AnyObject, handler: (AnyObject) -> Void)
        case group(Group)
    }

    private final class Group {
        var items: [Item] = []
        var actionName = ""
        var isEmpty: Bool { items.isEmpty }
    }

    private var undoStack: [Group] = []
    private var redoStack: [Group] = []
    private var openGroups: [Group] = []
    private var disableCount = 0
    private var _isUndoing = false
    private var _isRedoing = false
    /// Where registrations go while undoing or redoing: the group being collected for the other stack.
    private var collecting: Group?

    /// Whether registrations are grouped automatically, one group per event.
    open var groupsByEvent = true
    /// How many undo groups are kept; 0 means no limit.
    open var levelsOfUndo = 0 {
        didSet { trim() }
    }
    /// Run-loop modes (kept for API fidelity; unused on Linux).
    open var runLoopModes: [RunLoop.Mode] = [.default]

    public override init() {
        super.init()
    }

    // MARK: Registering

    /// Registers `handler` to undo a change of `target`. While undoing, the registration becomes a redo action.
    open func registerUndo<TargetType: AnyObject>(
        withTarget target: TargetType, handler: @escaping (TargetType) -> Void
    ) {
        guard disableCount == 0 else { return }
        let item = Item.action(target: target) { object in handler(object as! TargetType) }
        if let collecting {
            collecting.items.append(item)
            return
        }
        if openGroups.isEmpty {
            guard groupsByEvent else {
                preconditionFailure(
                    "registerUndo(withTarget:handler:) called with no open undo group and groupsByEvent off; call beginUndoGrouping() first"
                )
            }
            beginUndoGrouping()
        }
        openGroups[openGroups.count - 1].items.append(item)
        if !_isRedoing { redoStack.removeAll() }
    }

    /// Whether registrations are recorded.
    open var isUndoRegistrationEnabled: Bool { disableCount == 0 }

    /// Stops recording registrations (nestable).
    open func disableUndoRegistration() { disableCount += 1 }

    /// Resumes recording registrations.
    open func enableUndoRegistration() {
        precondition(disableCount > 0, "enableUndoRegistration() called more often than disableUndoRegistration()")
        disableCount -= 1
    }

    // MARK: Groups

    /// Opens a group: everything registered until the matching `endUndoGrouping()` is undone together.
    open func beginUndoGrouping() {
        openGroups.append(Group())
        NotificationCenter.default.post(name: .NSUndoManagerDidOpenUndoGroup, object: self)
    }

    /// Closes the innermost open group.
    open func endUndoGrouping() {
        precondition(!openGroups.isEmpty, "endUndoGrouping() called with no open undo group")
        NotificationCenter.default.post(name: .NSUndoManagerWillCloseUndoGroup, object: self)
        let group = openGroups.removeLast()
        if let parent = openGroups.last {
            if !group.isEmpty { parent.items.append(.group(group)) }
        } else if !group.isEmpty {
            undoStack.append(group)
            trim()
        }
        NotificationCenter.default.post(name: .NSUndoManagerDidCloseUndoGroup, object: self)
    }

    /// How deeply groups are nested now.
    open var groupingLevel: Int { openGroups.count }

    private func trim() {
        if levelsOfUndo > 0, undoStack.count > levelsOfUndo {
            undoStack.removeFirst(undoStack.count - levelsOfUndo)
        }
    }

    // MARK: Undoing and redoing

    /// Whether there is something to undo.
    open var canUndo: Bool { !undoStack.isEmpty || openGroups.first.map { !$0.isEmpty } == true }
    /// Whether there is something to redo.
    open var canRedo: Bool { !redoStack.isEmpty }
    /// Whether an undo is in progress.
    open var isUndoing: Bool { _isUndoing }
    /// Whether a redo is in progress.
    open var isRedoing: Bool { _isRedoing }

    /// Undoes the last group (closing the open top-level group first, when grouping by event).
    open func undo() {
        if groupsByEvent, groupingLevel == 1 { endUndoGrouping() }
        precondition(openGroups.isEmpty, "undo() called with an open nested undo group; close it first")
        guard let group = undoStack.popLast() else { return }
        NotificationCenter.default.post(name: .NSUndoManagerWillUndoChange, object: self)
        let redo = Group()
        redo.actionName = group.actionName
        _isUndoing = true
        collecting = redo
        perform(group)
        collecting = nil
        _isUndoing = false
        if !redo.isEmpty { redoStack.append(redo) }
        NotificationCenter.default.post(name: .NSUndoManagerDidUndoChange, object: self)
    }

    /// Undoes the last nested group.
    open func undoNestedGroup() {
        undo()
    }

    /// Redoes the last undone group.
    open func redo() {
        precondition(openGroups.isEmpty, "redo() called with an open undo group; close it first")
        guard let group = redoStack.popLast() else { return }
        NotificationCenter.default.post(name: .NSUndoManagerWillRedoChange, object: self)
        let undo = Group()
        undo.actionName = group.actionName
        _isRedoing = true
        collecting = undo
        perform(group)
        collecting = nil
        _isRedoing = false
        if !undo.isEmpty {
            undoStack.append(undo)
            trim()
        }
        NotificationCenter.default.post(name: .NSUndoManagerDidRedoChange, object: self)
    }

    /// Runs a group's actions, the latest first.
    private func perform(_ group: Group) {
        for item in group.items.reversed() {
            switch item {
            case .action(let target, let handler): handler(target)
            case .group(let nested): perform(nested)
            }
        }
    }

    // MARK: Clearing

    /// Forgets every undo and redo action.
    open func removeAllActions() {
        undoStack.removeAll()
        redoStack.removeAll()
        openGroups.removeAll()
    }

    /// Forgets the actions of one target.
    open func removeAllActions(withTarget target: Any) {
        let object = target as AnyObject
        func strip(_ group: Group) {
            group.items = group.items.filter { item in
                switch item {
                case .action(let actionTarget, _): return actionTarget !== object
                case .group(let nested):
                    strip(nested)
                    return !nested.isEmpty
                }
            }
        }
        for group in undoStack + redoStack + openGroups { strip(group) }
        undoStack.removeAll { $0.isEmpty }
        redoStack.removeAll { $0.isEmpty }
    }

    // MARK: Action names

    /// Names the current group, for an Undo menu.
    open func setActionName(_ actionName: String) {
        if let group = openGroups.last {
            group.actionName = actionName
        } else {
            undoStack.last?.actionName = actionName
        }
    }

    /// The name of the group `undo()` would undo.
    open var undoActionName: String { openGroups.first?.actionName ?? undoStack.last?.actionName ?? "" }
    /// The name of the group `redo()` would redo.
    open var redoActionName: String { redoStack.last?.actionName ?? "" }
    /// "Undo" followed by the undo action's name.
    open var undoMenuItemTitle: String { undoMenuTitle(forUndoActionName: undoActionName) }
    /// "Redo" followed by the redo action's name.
    open var redoMenuItemTitle: String { redoMenuTitle(forUndoActionName: redoActionName) }

    open func undoMenuTitle(forUndoActionName actionName: String) -> String {
        actionName.isEmpty ? "Undo" : "Undo \(actionName)"
    }

    open func redoMenuTitle(forUndoActionName actionName: String) -> String {
        actionName.isEmpty ? "Redo" : "Redo \(actionName)"
    }
}

extension Notification.Name {
    public static let NSUndoManagerCheckpoint = Notification.Name("NSUndoManagerCheckpointNotification")
    public static let NSUndoManagerWillUndoChange = Notification.Name("NSUndoManagerWillUndoChangeNotification")
    public static let NSUndoManagerWillRedoChange = Notification.Name("NSUndoManagerWillRedoChangeNotification")
    public static let NSUndoManagerDidUndoChange = Notification.Name("NSUndoManagerDidUndoChangeNotification")
    public static let NSUndoManagerDidRedoChange = Notification.Name("NSUndoManagerDidRedoChangeNotification")
    public static let NSUndoManagerDidOpenUndoGroup = Notification.Name("NSUndoManagerDidOpenUndoGroupNotification")
    public static let NSUndoManagerWillCloseUndoGroup = Notification.Name(
        "NSUndoManagerWillCloseUndoGroupNotification")
    public static let NSUndoManagerDidCloseUndoGroup = Notification.Name("NSUndoManagerDidCloseUndoGroupNotification")
}

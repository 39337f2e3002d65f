import OpenCoreDataShim

/// Relationship kinds in one model: one-to-one (Person.passport ↔ Passport.holder), many-to-many
/// (Person.clubs ↔ Club.members), ordered (Playlist.songs ↔ Song.playlist) and every delete rule
/// (Owner.denied — deny, Owner.ignored — no action, Owner.cascaded — cascade, Owner.nullified — nullify).
enum GraphModel {
    static func make() -> NSManagedObjectModel {
        func entity(_ name: String, _ attributes: [NSAttributeDescription] = []) -> NSEntityDescription {
            let entity = NSEntityDescription()
            entity.name = name
            entity.properties = attributes
            return entity
        }
        func relationship(
            _ name: String, to destination: NSEntityDescription, toMany: Bool, ordered: Bool = false,
            rule: NSDeleteRule = .nullifyDeleteRule
        ) -> NSRelationshipDescription {
            let relationship = NSRelationshipDescription()
            relationship.name = name
            relationship.destinationEntity = destination
            relationship.maxCount = toMany ? 0 : 1
            relationship.isOrdered = ordered
            relationship.deleteRule = rule
            return relationship
        }
        func pair(_ a: NSRelationshipDescription, _ b: NSRelationshipDescription) {
            a.inverseRelationship = b
            b.inverseRelationship = a
        }
        let name = { CompanyModel.attribute("name", .stringAttributeType) }
        let person = entity("Person", [name()])
        let passport = entity("Passport", [CompanyModel.attribute("number", .stringAttributeType)])
        let club = entity("Club", [name()])
        let playlist = entity("Playlist", [name()])
        let song = entity("Song", [name()])
        let owner = entity("Owner", [name()])
        let item = entity("Item", [name()])

        let personPassport = relationship("passport", to: passport, toMany: false)
        let passportHolder = relationship("holder", to: person, toMany: false)
        pair(personPassport, passportHolder)
        let personClubs = relationship("clubs", to: club, toMany: true)
        let clubMembers = relationship("members", to: person, toMany: true)
        pair(personClubs, clubMembers)
        let playlistSongs = relationship("songs", to: song, toMany: true, ordered: true)
        let songPlaylist = relationship("playlist", to: playlist, toMany: false)
        pair(playlistSongs, songPlaylist)

        let denied = relationship("denied", to: item, toMany: true, rule: .denyDeleteRule)
        let deniedBy = relationship("deniedBy", to: owner, toMany: false)
        pair(denied, deniedBy)
        let ignored = relationship("ignored", to: item, toMany: true, rule: .noActionDeleteRule)
        let ignoredBy = relationship("ignoredBy", to: owner, toMany: false)
        pair(ignored, ignoredBy)
        let cascaded = relationship("cascaded", to: item, toMany: true, rule: .cascadeDeleteRule)
        let cascadedBy = relationship("cascadedBy", to: owner, toMany: false)
        pair(cascaded, cascadedBy)
        let nullified = relationship("nullified", to: item, toMany: true, rule: .nullifyDeleteRule)
        let nullifiedBy = relationship("nullifiedBy", to: owner, toMany: false)
        pair(nullified, nullifiedBy)

        person.properties += [personPassport, personClubs]
        passport.properties += [passportHolder]
        club.properties += [clubMembers]
        playlist.properties += [playlistSongs]
        song.properties += [songPlaylist]
        owner.properties += [denied, ignored, cascaded, nullified]
        item.properties += [deniedBy, ignoredBy, cascadedBy, nullifiedBy]

        let model = NSManagedObjectModel()
        model.entities = [person, passport, club, playlist, song, owner, item]
        return model
    }

    static func insert(_ entity: String, _ name: String, into context: NSManagedObjectContext) -> NSManagedObject {
        let object = NSEntityDescription.insertNewObject(forEntityName: entity, into: context)
        object.setValue(name, forKey: entity == "Passport" ? "number" : "name")
        return object
    }
}
